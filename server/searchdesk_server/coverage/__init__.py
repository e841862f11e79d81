"""The coverage watch's store: which of a property's pages are in Google, as SearchDesk's own
inspections found them, with every change of verdict or coverage state.

The app's watcher writes it (one file per Google account, beside the archive: `store.path_for`);
servers only read it (`index_coverage`, and `inspect_url`'s note of the watch's older result). The
demo keeps a watch of its own in memory (`demo_watch`), never a file.
"""
