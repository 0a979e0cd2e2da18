"""The client API (/api/v1/): read published content, and write whole summaries as an editor."""
