"""Who may do what: anyone reads published content; editors read everything and write.

An editor is an active staff user (the admin's rule) with the model permission the action
needs; the "Editors" group carries all of them, superusers have them all.
"""

from rest_framework.permissions import SAFE_METHODS, BasePermission

from summaries.models.access import can_see_unpublished, is_staff

__all__ = ["ReadOrEditorWrite", "can_see_unpublished", "is_staff"]

# Unsafe method -> permission, for views that do not say otherwise.
METHOD_PERMISSIONS = {
    "POST": "add",
    "PUT": "change",
    "PATCH": "change",
    "DELETE": "delete",
}


class ReadOrEditorWrite(BasePermission):
    """Reads are open; writes need a staff user with the model's permission.

    A view (or one of its actions) may name the permission it needs in
    `required_permission` ("summaries.publish_summary"); otherwise the method decides
    (POST: add, PUT/PATCH: change) on the view's queryset model.
    """

    message = "You do not have permission to do this."

    def has_permission(self, request, view):
        if request.method in SAFE_METHODS or request.method not in view.allowed_methods:
            return True  # reads are open; an unsupported method gets its 405
        if not is_staff(request.user):
            return False
        return request.user.has_perm(self._permission(request, view))

    @staticmethod
    def _permission(request, view) -> str:
        action = getattr(view, getattr(view, "action", None) or "", None)
        named = getattr(action, "required_permission", None) or getattr(
            view, "required_permission", None
        )
        if named:
            return named
        model = view.get_queryset().model
        verb = METHOD_PERMISSIONS.get(request.method, "change")
        return f"{model._meta.app_label}.{verb}_{model._meta.model_name}"
