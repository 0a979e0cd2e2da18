"""Readers following a channel, a person, a topic or everything by e-mail.

`signup` holds the rules of an address's follows (sign up, confirm, unsubscribe, change
how often, bounce); `digests` decides who is due a digest and what goes in it, and sends
it at most once per period; `mail` builds the messages; `tokens` signs the links in them;
`counts` tells editors how many follow what.
Celery tasks (`tasks`) are thin and call these services by id.
"""
