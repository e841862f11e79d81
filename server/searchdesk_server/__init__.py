"""SearchDesk: a stdio MCP server for Google Search Console."""

__version__ = "0.1.0"
