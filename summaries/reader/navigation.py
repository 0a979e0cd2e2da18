"""The header navigation's current section and the breadcrumbs of reader pages."""

from dataclasses import dataclass

from django.urls import reverse

# (section, label, URL name) of the header navigation, in its order.
SECTIONS = {
    "home": ("Home", "summaries:home"),
    "channels": ("Channels", "summaries:channel-list"),
    "people": ("People", "summaries:person-list"),
    "topics": ("Topics", "summaries:topic-list"),
}


@dataclass(frozen=True)
class Crumb:
    label: str
    url: str


def breadcrumbs(*trail: tuple[str, str]) -> list[Crumb]:
    """Home, then `trail` as (label, url) pairs; the last one is the page itself."""
    home_label, home_name = SECTIONS["home"]
    return [Crumb(home_label, reverse(home_name)), *(Crumb(label, url) for label, url in trail)]


def section_crumb(section: str) -> tuple[str, str]:
    label, name = SECTIONS[section]
    return label, reverse(name)


class SectionMixin:
    """Tell base.html which header link is the current section.

    On the section's own page the link is the current page (aria-current="page"); on a page
    inside it (a channel of the channel index) it marks where the reader is (aria-current=
    "true"), since the link leads elsewhere.
    """

    section = ""
    section_page = False

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        current = "page" if self.section_page else "true"
        context["nav"] = {"section": self.section, "current": current}
        return context
