"""The browser side of the server (issue 13): server-rendered pages (Jinja2), their assets,
share-link pages and browser sign-in. Pages never take a bearer token and the API never takes
the session cookie."""
