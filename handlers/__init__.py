"""One module per command: parse, read, diagnose, build a Reply."""
