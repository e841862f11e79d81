"""Tool handlers, one module per subject; each function is named for its tool."""
