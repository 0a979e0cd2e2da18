/*
 * Click-to-load video player on the summary page.
 *
 * The page ships a neutral poster with a link to the video on YouTube; nothing is requested
 * from YouTube while reading. This script shows a play button on the poster; pressing it
 * replaces the poster with YouTube's privacy-enhanced embed (youtube-nocookie.com, the only
 * frame source the Content-Security-Policy allows).
 *
 * "Watch from 3:21" links keep their YouTube address (…/watch?v=<id>&t=201s), which is what
 * readers without JavaScript follow. Here a plain click or Enter on one loads the player at
 * that second instead (or reloads it there: the embed's start parameter is the seek), scrolls
 * it into view and moves focus to it. Clicks with a modifier key still open YouTube. The
 * receipts ("▶ 12:40" beside a statement, a quotation, a line of the transcript page) are
 * such links too.
 */
(function () {
    "use strict";

    var EMBED = "https://www.youtube-nocookie.com/embed/";
    var ID = /^[A-Za-z0-9_-]{11}$/;
    var WATCH_HOSTS = ["www.youtube.com", "youtube.com", "m.youtube.com"];

    var player = document.getElementById("player");
    var videoId = player && player.dataset.youtubeId;
    if (!videoId || !ID.test(videoId)) {
        return;
    }
    var stage = player.querySelector(".player-stage");
    var button = player.querySelector(".player-play");
    var note = player.querySelector(".player-note");
    var frame = null;

    function embedUrl(start) {
        var url = EMBED + videoId + "?autoplay=1";
        return start > 0 ? url + "&start=" + start : url;
    }

    function reducedMotion() {
        return window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    }

    function play(start) {
        if (!frame) {
            frame = document.createElement("iframe");
            frame.className = "player-frame";
            frame.title = "YouTube video player: " + (player.dataset.title || "video");
            // The stage keeps a 16:9 box (site.css); the size only matters without CSS.
            frame.width = "560";
            frame.height = "315";
            frame.allow = "autoplay; encrypted-media; fullscreen; picture-in-picture";
            frame.allowFullscreen = true;
            // YouTube refuses to play embeds that send no referrer; the origin is enough.
            frame.referrerPolicy = "strict-origin-when-cross-origin";
            frame.src = embedUrl(start);
            stage.replaceChildren(frame);
            player.classList.add("player--loaded");
            if (note) {
                // Replaced, not removed: the text below the player stays where it is.
                note.textContent = "Playing in YouTube’s privacy-enhanced mode.";
            }
        } else {
            frame.src = embedUrl(start);
        }
        frame.focus({ preventScroll: true });
    }

    function inView() {
        var box = player.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= window.innerHeight;
    }

    // The second a "Watch from" link starts at, when it links into this very video.
    function startOf(link) {
        var url;
        try {
            url = new URL(link.href);
        } catch (error) {
            return null;
        }
        if (WATCH_HOSTS.indexOf(url.hostname) === -1 || url.pathname !== "/watch") {
            return null;
        }
        var time = /^(\d+)s?$/.exec(url.searchParams.get("t") || "");
        if (url.searchParams.get("v") !== videoId || !time) {
            return null;
        }
        return parseInt(time[1], 10);
    }

    button.addEventListener("click", function () {
        play(0);
    });

    document.addEventListener("click", function (event) {
        if (
            event.defaultPrevented ||
            event.button !== 0 ||
            event.metaKey ||
            event.ctrlKey ||
            event.shiftKey ||
            event.altKey
        ) {
            return;
        }
        var link = event.target.closest && event.target.closest("a[href]");
        var start = link ? startOf(link) : null;
        if (start === null) {
            return;
        }
        event.preventDefault();
        play(start);
        // A player already in full view (the transcript page keeps it there) stays put, and
        // so does the text the reader was at.
        if (!inView()) {
            player.scrollIntoView({ block: "start", behavior: reducedMotion() ? "auto" : "smooth" });
        }
    });

    button.hidden = false;
})();
