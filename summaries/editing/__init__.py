"""The write path: rules on what editors write, shared by the admin and the API."""
