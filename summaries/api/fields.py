"""Fields the read representations share: API and reader-page addresses, and fields
only representations have."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from summaries.reader.absolute import site_url

from .links import api_url


@extend_schema_field(OpenApiTypes.URI)
class ApiUrlField(serializers.Field):
    """The absolute API address of an object looked up by `lookup` (a slug)."""

    def __init__(self, view_name, lookup="slug", **kwargs):
        self.view_name, self.lookup = view_name, lookup
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, value):
        slug = value
        for part in self.lookup.split("."):
            slug = getattr(slug, part)
        request = self.context.get("request")
        if request is None:
            return reverse(self.view_name, kwargs={"slug": slug})
        return api_url(self.view_name, kwargs={"slug": slug}, request=request)


@extend_schema_field(OpenApiTypes.URI)
class PageUrlField(serializers.Field):
    """The absolute address of the object's reader page."""

    def __init__(self, **kwargs):
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, value):
        request = self.context.get("request")
        url = value.get_absolute_url()
        return site_url(url) if request else url


class OutputOnlyField(serializers.Field):
    """A field only representations have; not required, so the schema lets it be absent
    (shown with ?expand=pins or ?expand=corrections only)."""

    def __init__(self, **kwargs):
        super().__init__(source="*", required=False, **kwargs)

    def to_internal_value(self, data):
        raise serializers.ValidationError("This field is read only.")
