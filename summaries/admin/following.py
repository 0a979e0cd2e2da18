"""Followers by e-mail, for editors: how many follow each channel, person, topic and
everything (view_subscription, given to Editors); the addresses only with the separate
view_subscriber_addresses permission (no group has it by default). Read-only."""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from summaries.following import counts
from summaries.models import Subscription

from .base import ReadOnlyAdmin

ADDRESSES_PER_PAGE = 100


@admin.register(Subscription)
class SubscriptionAdmin(ReadOnlyAdmin, admin.ModelAdmin):
    def get_urls(self):
        # The counts page only: no page of one follow (it would show its address).
        changelist = self.admin_site.admin_view(self.changelist_view)
        name = f"{self.opts.app_label}_{self.opts.model_name}_changelist"
        return [
            path("", changelist, name=name),
            path("<path:rest>", self.admin_site.admin_view(self.to_changelist)),
        ]

    def to_changelist(self, request, rest):
        return HttpResponseRedirect(reverse("admin:summaries_subscription_changelist"))

    def changelist_view(self, request, extra_context=None):
        if not self.has_view_permission(request):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Followers by e-mail",
            "counts": counts.follower_counts(),
        }
        if request.user.has_perm("summaries.view_subscriber_addresses"):
            paginator = Paginator(counts.followers_with_addresses(), ADDRESSES_PER_PAGE)
            context["addresses"] = paginator.get_page(request.GET.get("page"))
        return TemplateResponse(request, "admin/summaries/subscription/followers.html", context)
