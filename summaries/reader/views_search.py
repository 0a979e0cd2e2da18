"""The search page."""

from django.db import connections
from django.views.generic import ListView

from summaries.models import Summary
from summaries.pagecache.middleware import canonical_query

from . import search, search_filters, search_results, search_suggest
from .views_lists import PAGE_SIZE


class SearchView(ListView):
    """Search results with snippets, filters (search_filters.SearchFilter) and "did you
    mean" when nothing is found; filters alone list the matching summaries, newest first.

    Not page-cached: every query string is a page of its own, so caching them would let
    anyone fill the cache. Invalid filters answer 400 with the form saying what is wrong;
    a page number that is not one shows the first page, one past the end the last.
    """

    template_name = "summaries/search.html"
    context_object_name = "summaries"
    paginate_by = PAGE_SIZE

    def get(self, request, *args, **kwargs):
        self.query = search.clean_query(request.GET.get("q", ""))
        self.choices = search_filters.cached_filter_choices()
        self.filterset = search_filters.SearchFilter(
            request.GET, queryset=Summary.objects.published(), choices=self.choices.choices
        )
        self.valid = self.filterset.is_valid()
        self.filters = self.filterset.chosen() if self.valid else {}
        response = super().get(request, *args, **kwargs)
        if not self.valid:
            response.status_code = 400
        return response

    def get_queryset(self):
        """The ids of the results, best first: a list when searching (at most MAX_RANKED
        on PostgreSQL, so its length is the count: one query), else a queryset."""
        if not self.valid or not (self.query or self.filters):
            return []
        summaries = self.filterset.qs
        if self.query:
            matches = search.search_summaries(self.query, summaries=summaries)
            return list(matches.values_list("pk", flat=True))
        return summaries.order_by("-publish_at", "-id").values_list("pk", flat=True)

    def paginate_queryset(self, queryset, page_size):
        paginator = self.get_paginator(queryset, page_size)
        page = paginator.get_page(self.request.GET.get("page"))
        return paginator, page, page.object_list, page.has_other_pages()

    def page_url(self, number: int) -> str:
        pairs = [("q", self.query), *self.filters.items()]
        if number != 1:
            pairs.append(("page", str(number)))
        return f"?{canonical_query(pairs)}"

    def suggestion(self) -> search_suggest.Suggestion | None:
        def finds_something(query: str) -> bool:
            return search.search_summaries(query, summaries=self.filterset.qs).exists()

        return search_suggest.suggest(
            self.query,
            choices=self.choices.choices,
            filters=self.filters,
            finds_something=finds_something,
        )

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        page = context["page_obj"]
        form = self.filterset.form
        context["query"] = self.query
        context["searched"] = self.valid and bool(self.query or self.filters)
        context["results"] = search_results.page_results(list(page.object_list), self.query)
        context["choices"] = self.choices.choices
        context["options"] = {
            name: self.choices.options_html(name, self.filters.get(name, ""))
            for name in search_filters.CHOICE_NAMES
        }
        context["filters"] = self.filters
        context["selected"] = {
            name: self.filters.get(name, "") for name in search_filters.FILTER_NAMES
        }
        context["errors"] = {name: errors[0] for name, errors in form.errors.items()}
        context["capped"] = (
            bool(self.query)
            and connections[Summary.objects.db].vendor == "postgresql"
            and page.paginator.count >= search.MAX_RANKED
        )
        if page.has_previous():
            context["previous_url"] = self.page_url(page.previous_page_number())
        if page.has_next():
            context["next_url"] = self.page_url(page.next_page_number())
        if context["searched"] and self.query and not page.paginator.count:
            context["suggestion"] = self.suggestion()
        return context
