# Varnish in front of Curation (Varnish 7.1, Debian's varnish + varnish-modules for xkey).
#
# Used as is by the tests (tests/integration/test_varnish.py), the benchmark
# (bench/varnish.py) and production (docs/deploy.md, "HTTP cache in front"). What differs
# between sites is in site.vcl, found on varnishd's vcl_path (`-p vcl_path=DIR:...`):
#   backend default { .host = "..."; .port = "..."; .probe = curation_health; }
#   acl purgers { "127.0.0.1"; }   # who may purge (the web and worker machines)
# deploy/varnish/site.vcl.example is one.
#
# Listeners: connections from the TLS terminator (hitch, haproxy, a load balancer) come to
# a listener named "tls", preferably with the PROXY protocol so that client.ip is the
# reader's (`-a tls=127.0.0.1:8443,PROXY`); plain HTTP to any other (`-a :80`).
#
# What it does:
# - Forwarding headers are set here, never taken from the client: X-Forwarded-Proto is
#   "https" on the "tls" listener and "http" on any other, X-Forwarded-For is client.ip
#   alone, and X-Forwarded-Host, X-Forwarded-Port, X-Forwarded-Server, X-Real-IP and
#   Forwarded are removed. (The site builds its links from SITE_URL anyway; the scheme
#   still decides its HTTPS redirect, and the address its rate limits.)
# - Objects are looked up by URL, scheme and Host, the Host in one spelling: lower case,
#   no trailing dot, no port.
# - Query strings are sorted (std.querysort), as the site's page cache spells them; an
#   answer to parameters the site does not serve comes back private and is never kept.
# - API reads are looked up with one Accept (application/json); an Accept naming a media
#   type parameter (`indent=8`, `version=2`) or no JSON at all, and any Accept-Datetime
#   (a summary's past, reader/memento.py), is passed: the site never shares those either
#   (summaries/pagecache/middleware.py, may_serve_cached).
# - Purges by tag: `PURGE /` with an `xkey-purge: TAG TAG ...` header, from the purgers
#   only (403 otherwise); answered 200 once the objects are gone (summaries/pagecache/purge.py).
# - Anonymous GET and HEAD of anything but /admin/ are looked up with their cookies
#   stripped; a request with a session cookie, an Authorization header, or to /admin/ is
#   passed to the site and never cached.
# - Answers are kept as long as the site's Cache-Control says (s-maxage): never one marked
#   private, no-store or no-cache, or one that sets a cookie. Vary is honoured.
# - Grace: while the site is healthy (its /healthz probe), an expired object is served for
#   up to 10 s while a fresh one is fetched; while it is sick or restarting, for up to 6 h.
#   Purged objects are gone at once (a hard purge), so a change is never served stale.
# - The tags header is dropped before answers leave; X-Varnish and Age stay (a hit shows
#   two ids in X-Varnish and an Age).
vcl 4.1;

import std;
import xkey;

probe curation_health {
    .url = "/healthz";
    .interval = 2s;
    .timeout = 2s;
    .window = 3;
    .threshold = 2;
    .initial = 2;
}

include "site.vcl";

sub curation_forwarding {
    unset req.http.X-Forwarded-Host;
    unset req.http.X-Forwarded-Port;
    unset req.http.X-Forwarded-Server;
    unset req.http.X-Forwarded-Prefix;
    unset req.http.X-Real-IP;
    unset req.http.Forwarded;
    if (local.socket == "tls") {
        set req.http.X-Forwarded-Proto = "https";
    } else {
        set req.http.X-Forwarded-Proto = "http";
    }
    set req.http.X-Forwarded-For = client.ip;
}

sub vcl_recv {
    call curation_forwarding;
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "Purging is not allowed from this address."));
        }
        if (!req.http.xkey-purge) {
            return (synth(400, "An xkey-purge header naming the tags is required."));
        }
        set req.http.x-purged = xkey.purge(req.http.xkey-purge);
        return (synth(200, "Purged " + req.http.x-purged + " objects."));
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    if (req.url ~ "^/admin(/|$)" || req.http.Authorization) {
        return (pass);
    }
    # Django's session cookie (SESSION_COOKIE_NAME): a possibly signed-in user.
    if (req.http.Cookie ~ "(^|;\s*)sessionid=") {
        return (pass);
    }
    # Anything else a reader's browser sends as cookies (a CSRF token, analytics) changes
    # nothing on a public page.
    unset req.http.Cookie;
    if (req.http.Accept-Datetime) {
        return (pass);
    }
    if (req.url ~ "^/api(/|$)") {
        # The q weights aside, any parameter asks the renderer for something else.
        if (regsuball(req.http.Accept, ";\s*[qQ]\s*=\s*[0-9.]*", "") ~ ";") {
            return (pass);
        }
        if (req.http.Accept && req.http.Accept !~ "(json|\*/\*|application/\*)") {
            return (pass);  # the site answers 406
        }
        set req.http.Accept = "application/json";
    }
    set req.url = std.querysort(req.url);
    set req.url = regsub(req.url, "\?$", "");
    if (std.healthy(req.backend_hint)) {
        set req.grace = 10s;
    }
    return (hash);
}

sub vcl_hash {
    hash_data(req.url);
    # One spelling of the host: the site answers every spelling alike.
    hash_data(regsub(regsub(std.tolower(req.http.host), ":[0-9]+$", ""), "\.$", ""));
    # The scheme as set in vcl_recv: plain HTTP may be redirected to HTTPS by the site.
    hash_data(req.http.X-Forwarded-Proto);
    return (lookup);
}

sub vcl_backend_response {
    set beresp.grace = 6h;
    if (bereq.url ~ "^/admin(/|$)"
        || beresp.http.Set-Cookie
        || beresp.http.Cache-Control ~ "(?i)(private|no-store|no-cache)"
        || beresp.http.Vary == "*") {
        # Not kept; later requests for it go straight to the site for 2 minutes.
        set beresp.uncacheable = true;
        set beresp.ttl = 120s;
        return (deliver);
    }
    return (deliver);
}

sub vcl_deliver {
    unset resp.http.xkey;
    if (obj.uncacheable) {
        set resp.http.X-Cache = "PASS";
    } elsif (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
}
