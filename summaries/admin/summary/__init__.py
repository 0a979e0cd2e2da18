"""The summary page: one page per summary with its parts, history, preview and warnings.

inlines: the parts and the citation table; columns: the changelist's columns and filter;
buttons: the change form's buttons; actions: the changelist's bulk actions; page:
SummaryAdmin itself (registered when page is imported, as here).
"""

from .page import SummaryAdmin, change_comment, compact_html

__all__ = ["SummaryAdmin", "change_comment", "compact_html"]
