"""What the app keeps for the person: the record of changes, the archive, and the coverage watch.

- ``record_keeper``: how long the record of changes (the server's journal) is kept; Clear the record.
- The archive (the history beyond Google's 16 months): ``archive_copier`` (the copy, paced and backed
  off; no Qt), ``archive_sync`` (its thread), ``archive_keeper`` (the files, the yes, keep or delete).
- The coverage watch (which of the person's pages are in Google): ``coverage_address`` (where the
  sitemap reader may go), ``coverage_sitemaps`` (the sitemaps read from the person's website),
  ``coverage_inspector`` (each page through URL Inspection; no Qt), ``coverage_sync`` (its thread and
  rhythm), ``coverage_keeper`` (the yes, the switch, Pause, Delete).
- What both share: ``sync_thread`` (the thread each runs on) and ``keeper`` (the yes, the switch, the
  thread made only after it, Delete off the Qt thread).
"""
