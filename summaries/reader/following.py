"""Following by e-mail, the reader's side: sign up, confirm, manage, unsubscribe (/follow/…).

Every page here is personal and answered `never_cache` (Cache-Control: private, no-store):
none is marked for the page cache, so none is ever stored or served from it.

The sign-up form sits on cached pages (channel, person, topic, and every footer), which
carry no CSRF token, so its POST is exempt from CSRF. That is safe here: the endpoint acts
on nobody's session (a forged sign-up can do nothing a stranger posting the form cannot),
it is rate-limited per client and per address (FOLLOW_RATE_IP, FOLLOW_RATE_EMAIL), and it
only ever mails a confirmation: nothing follows until the address's owner confirms. The
alternative, a GET to a sign-up page that then POSTs with a token, puts the address in
URLs (logs, history, Referer) and costs a second step.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from summaries.following import signup, tokens
from summaries.models import Subscription
from summaries.ops import ratelimits

Frequency = Subscription.Frequency


class FollowForm(forms.Form):
    email = forms.EmailField(
        label="E-mail address", max_length=254, validators=[signup.check_address]
    )
    frequency = forms.ChoiceField(
        label="How often", choices=Frequency.choices, initial=Frequency.DAILY
    )
    kind = forms.ChoiceField(choices=Subscription.Kind.choices, widget=forms.HiddenInput)
    slug = forms.SlugField(required=False, max_length=200, widget=forms.HiddenInput)

    def clean(self):
        data = super().clean() or {}
        if "kind" in data:
            try:
                data["target"] = signup.find_target(kind=data["kind"], slug=data.get("slug", ""))
            except signup.UnknownTarget:
                raise forms.ValidationError(
                    "There is nothing to follow here any more; try another page."
                ) from None
        return data


def _limited(request: HttpRequest) -> bool:
    return ratelimits.limited(
        request,
        group="follow",
        client_rate=settings.FOLLOW_RATE_IP,
        address=signup.normalise_email(request.POST.get("email", ""))[:254],
        address_rate=settings.FOLLOW_RATE_EMAIL,
    )


def _error(request: HttpRequest, status: int, title: str, text: str) -> HttpResponse:
    return render(
        request, "summaries/follow_message.html", {"title": title, "text": text}, status=status
    )


def _bad_link(request: HttpRequest, exc: Exception) -> HttpResponse:
    if isinstance(exc, tokens.ExpiredToken):
        return _error(
            request,
            410,
            "This link has expired",
            "Links in our e-mails work for a while only. Sign up again from any page, "
            "or use the link in a more recent e-mail.",
        )
    return _error(
        request,
        400,
        "This link does not work",
        "It may have been cut short or changed on the way. Copy the whole link from the e-mail.",
    )


@csrf_exempt  # see the module's docstring: no session is acted on; limited; double opt-in
@never_cache
@require_http_methods(["GET", "POST"])
def follow(request: HttpRequest) -> HttpResponse:
    """The sign-up form (GET), and its answer: the same page whatever the address's state."""
    if request.method == "GET":
        initial = {"kind": request.GET.get("kind", "all"), "slug": request.GET.get("slug", "")}
        return render(
            request, "summaries/follow_signup.html", {"form": FollowForm(initial=initial)}
        )
    if _limited(request):
        return _error(
            request,
            429,
            "Too many sign-ups",
            "We received many sign-ups from you in a short time. Please try again later.",
        )
    form = FollowForm(request.POST)
    if not form.is_valid():
        return render(request, "summaries/follow_signup.html", {"form": form}, status=400)
    signup.request_subscription(
        email=form.cleaned_data["email"],
        target=form.cleaned_data["target"],
        frequency=form.cleaned_data["frequency"],
    )
    # The same words for a new, pending or confirmed address: the answer tells nobody who
    # follows what.
    return _error(
        request,
        200,
        "Check your e-mail",
        "If this address needs to confirm, a link to confirm is on its way. Nothing is sent "
        "to it until the link is followed.",
    )


@never_cache
@require_http_methods(["GET", "POST"])
def confirm(request: HttpRequest, token: str) -> HttpResponse:
    """What a confirmation link would confirm, and a button (a GET changes nothing: mail
    scanners open links); the POST confirms."""
    try:
        subscriber_id = tokens.read_confirm_token(token)
    except (tokens.BadToken, tokens.ExpiredToken) as exc:
        return _bad_link(request, exc)
    if request.method == "POST":
        signup.confirm(subscriber_id=subscriber_id)
        return HttpResponseRedirect(
            reverse("summaries:follow-manage", args=[tokens.manage_token(subscriber_id)])
            + "?confirmed=1"
        )
    follows = list(signup.pending(subscriber_id=subscriber_id))
    return render(request, "summaries/follow_confirm.html", {"follows": follows})


class FrequencyForm(forms.Form):
    subscription = forms.IntegerField()
    frequency = forms.ChoiceField(label="How often", choices=Frequency.choices)


@never_cache
@require_http_methods(["GET", "POST"])
def manage(request: HttpRequest, token: str) -> HttpResponse:
    """Every follow of the address, reached by the signed link in each message (no login):
    change how often, unsubscribe one, or all."""
    try:
        subscriber_id = tokens.read_manage_token(token)
    except (tokens.BadToken, tokens.ExpiredToken) as exc:
        return _bad_link(request, exc)
    if request.method == "POST":
        _apply(request, subscriber_id)
        return HttpResponseRedirect(request.path + "?saved=1")
    follows = list(signup.follows_of(subscriber_id=subscriber_id))
    context = {
        "follows": follows,
        "frequencies": Frequency.choices,
        "saved": "saved" in request.GET,
        "confirmed": "confirmed" in request.GET,
    }
    return render(request, "summaries/follow_manage.html", context)


def _apply(request: HttpRequest, subscriber_id: int) -> None:
    action = request.POST.get("action")
    if action == "unsubscribe-all":
        signup.unsubscribe(subscriber_id=subscriber_id)
        return
    form = FrequencyForm(request.POST)
    if not form.is_valid():
        return
    subscription_id = form.cleaned_data["subscription"]
    if action == "unsubscribe":
        signup.unsubscribe(subscriber_id=subscriber_id, subscription_ids=[subscription_id])
    elif action == "save":
        signup.change_frequency(
            subscriber_id=subscriber_id,
            subscription_id=subscription_id,
            frequency=form.cleaned_data["frequency"],
        )


@csrf_exempt  # RFC 8058: mail clients POST here with no cookie nor token
@never_cache
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """One-click unsubscribe: a POST ends the follows the message was about, with no
    confirmation; a GET shows a page with the button (a GET changes nothing)."""
    try:
        asked = tokens.read_unsubscribe_token(token)
    except tokens.BadToken as exc:
        return _bad_link(request, exc)
    if request.method == "POST":
        signup.unsubscribe(
            subscriber_id=asked.subscriber_id, subscription_ids=asked.subscription_ids
        )
        return render(
            request,
            "summaries/follow_message.html",
            {
                "title": "You are unsubscribed",
                "text": "No more e-mails will be sent about these follows.",
                "manage_url": reverse(
                    "summaries:follow-manage", args=[tokens.manage_token(asked.subscriber_id)]
                ),
            },
        )
    return render(request, "summaries/follow_unsubscribe.html")
