"""Who sees what: the one rule for unpublished work, shared by the API and the page cache."""


def is_staff(user) -> bool:
    return bool(user and user.is_authenticated and user.is_active and user.is_staff)


def can_see_unpublished(user) -> bool:
    """Editors see drafts, summaries in review and scheduled ones; everyone else does not."""
    return is_staff(user) and user.has_perm("summaries.view_summary")
