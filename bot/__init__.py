"""The Slack app, its rendering, threads and watches, and the `kubewhy` CLI."""
