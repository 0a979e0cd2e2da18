"""Webhook endpoints belong to the user who registered them.

The endpoint's `created_by` becomes its `owner` (the same user, kept); other editors reach
an endpoint only with "manage all webhook endpoints", which no group is given here.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0018_working_copy_video_and_schedule"),
    ]

    operations = []
