"""The OpenAPI schema (/api/schema/) and its Swagger UI (/api/docs/)."""

from csp.decorators import csp_update
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

# Swagger UI's files come from this site (drf-spectacular-sidecar), and the split view serves
# its start-up script from this site too, so no inline script and no CDN are needed.
schema_view = SpectacularAPIView.as_view()
docs_view = csp_update(
    {
        # Swagger UI sets inline styles on the elements it builds, and draws icons as data URLs.
        "style-src": ["'unsafe-inline'"],
        "img-src": ["data:"],
    }
)(SpectacularSwaggerSplitView.as_view(url_name="api-schema"))
