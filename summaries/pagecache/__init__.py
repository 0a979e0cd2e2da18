"""The page cache: whole pages and shared fragments, made stale by one content generation.

`generation` reads the number every stored value carries (kept in the database) and holds
`content_changed()`, which every write path calls in its transaction; `listening` keeps a
copy of the number in each process (PostgreSQL's LISTEN/NOTIFY); `middleware` serves
and stores pages (and the views' opt-in); `fragments` keeps parts many pages share;
`backend` (Redis) and `filecache` (files under var/) are the cache backends. Nothing is
imported here, so that loading a backend does not load the models.
"""
