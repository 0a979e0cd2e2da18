"""The project's settings with the fragment cache off (PAGE_CACHE_FRAGMENTS = False).

For bench/run_pages.py's "cold" runs: gunicorn serves every page with no cache at all
(each request also carries a query string of its own, so it misses the page cache).
"""

from curation.settings import *  # noqa: F403

PAGE_CACHE_FRAGMENTS = False
