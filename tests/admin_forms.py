"""Read an admin change form's fields the way a browser would submit them."""

from html.parser import HTMLParser


class _FormFields(HTMLParser):
    def __init__(self, form_id):
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.fields = {}
        self._textarea = None
        self._select = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and attrs.get("id") == self.form_id:
            self.inside = True
        if not self.inside:
            return
        name = attrs.get("name")
        if tag == "input" and name and attrs.get("type") not in ("submit", "button", "file"):
            if attrs.get("type") in ("checkbox", "radio") and "checked" not in attrs:
                return
            self.fields[name] = attrs.get("value", "on" if attrs.get("type") == "checkbox" else "")
        elif tag == "textarea" and name:
            self._textarea = name
            self.fields[name] = ""
        elif tag == "select" and name:
            self._select = name
            self.fields.setdefault(name, [] if "multiple" in attrs else "")
        elif tag == "option" and self._select and "selected" in attrs:
            if isinstance(self.fields[self._select], list):
                self.fields[self._select].append(attrs.get("value", ""))
            else:
                self.fields[self._select] = attrs.get("value", "")

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        if self._textarea:
            self.fields[self._textarea] += data


def form_fields(response, form_id="summary_form") -> dict:
    """The submitted values of the form with this id on an admin page."""
    parser = _FormFields(form_id)
    parser.feed(response.content.decode())
    # Django renders a leading newline after <textarea>, which browsers drop.
    return {
        k: v[1:] if isinstance(v, str) and v.startswith("\n") else v
        for k, v in parser.fields.items()
    }


def add_inline_row(data: dict, prefix: str, **values) -> dict:
    """Append one new row to an inline formset in `data`."""
    index = int(data[f"{prefix}-TOTAL_FORMS"])
    for name, value in values.items():
        data[f"{prefix}-{index}-{name}"] = value
    data[f"{prefix}-TOTAL_FORMS"] = str(index + 1)
    return data
