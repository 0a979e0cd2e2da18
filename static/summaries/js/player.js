/*
 * Click-to-load video player on the summary page and the transcript page.
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
 *
 * A player marked data-follow (the transcript page's) also reports the time being played,
 * as a "player:time" event on #player (detail.seconds). The embed is asked with
 * enablejsapi=1 and origin=<this site>; once this page posts {"event": "listening"} to it,
 * it posts its state back ("infoDelivery" messages with info.currentTime). That is the
 * protocol of YouTube's IFrame API spoken directly, so no script of YouTube's is loaded.
 * Only messages from the embed's own window and origin are read.
 */
(function () {
    "use strict";

    var EMBED = "https://www.youtube-nocookie.com/embed/";
    var ORIGIN = "https://www.youtube-nocookie.com"; // the embed's, and its messages'
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
    var follow = player.hasAttribute("data-follow");
    var listening = null;

    function embedUrl(start) {
        var url = EMBED + videoId + "?autoplay=1";
        if (start > 0) {
            url += "&start=" + start;
        }
        if (follow) {
            url += "&enablejsapi=1&origin=" + encodeURIComponent(window.location.origin);
        }
        return url;
    }

    function stopListening() {
        window.clearInterval(listening);
        listening = null;
    }

    // Ask the embed for its state, again every 250 ms until it answers (for up to 30 s):
    // its own script may not be ready for the first message. Each load of the frame (a
    // seek) asks anew.
    function listen() {
        var tries = 0;
        stopListening();
        function ask() {
            tries += 1;
            if (!frame || !frame.contentWindow || tries > 120) {
                stopListening();
                return;
            }
            var message = { event: "listening", id: player.id, channel: "widget" };
            frame.contentWindow.postMessage(JSON.stringify(message), ORIGIN);
        }
        ask();
        listening = window.setInterval(ask, 250);
    }

    // The message's data as an object, or null: the embed sends JSON text.
    function parse(data) {
        if (typeof data !== "string" || data.length > 100000) {
            return null;
        }
        try {
            data = JSON.parse(data);
        } catch (error) {
            return null;
        }
        return data && typeof data === "object" ? data : null;
    }

    function heard(event) {
        if (!frame || event.origin !== ORIGIN || event.source !== frame.contentWindow) {
            return;
        }
        var data = parse(event.data);
        if (!data) {
            return;
        }
        stopListening();
        // infoDelivery carries what changed since the last one, initialDelivery everything.
        if (data.event !== "infoDelivery" && data.event !== "initialDelivery") {
            return;
        }
        var info = data.info;
        var seconds = info && typeof info === "object" ? info.currentTime : undefined;
        if (typeof seconds !== "number" || !isFinite(seconds) || seconds < 0) {
            return;
        }
        player.dispatchEvent(new CustomEvent("player:time", { detail: { seconds: seconds } }));
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
            if (follow) {
                frame.addEventListener("load", listen);
            }
            stage.replaceChildren(frame);
            player.classList.add("player--loaded");
            if (note) {
                // Replaced, not removed: the text below the player stays where it is.
                note.textContent = "Playing in YouTube’s privacy-enhanced mode.";
            }
            player.dispatchEvent(new CustomEvent("player:load"));
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

    if (follow) {
        window.addEventListener("message", heard);
    }
    button.hidden = false;
})();
