"""The reader site: pages, feeds, sitemaps, search and related videos, all read-only."""
