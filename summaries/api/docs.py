"""The OpenAPI schema (/api/schema/) and its Swagger UI (/api/docs/)."""

from csp.decorators import csp_update
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

# Swagger UI's files come from its CDN (drf-spectacular's default SWAGGER_UI_DIST); the split
# view serves its start-up script from this site, so no inline script is needed.
SWAGGER_CDN = "https://cdn.jsdelivr.net"

schema_view = SpectacularAPIView.as_view()
docs_view = csp_update(
    {
        "script-src": [SWAGGER_CDN],
        # Swagger UI sets inline styles on the elements it builds.
        "style-src": [SWAGGER_CDN, "'unsafe-inline'"],
    }
)(SpectacularSwaggerSplitView.as_view(url_name="api-schema"))
