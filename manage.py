#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")
    from django.core.management import execute_from_command_line

    from curation.startup import load_settings_or_exit

    load_settings_or_exit()

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
