/*
 * The transcript page: find in the transcript as you type, and mark the paragraph being
 * played. The page's "lines" below are its paragraphs.
 *
 * Without JavaScript the form asks the server (?q=), which hides the paragraphs that do not
 * hold every word and marks the words. Here the same filter runs in the page on every
 * keystroke: a paragraph is shown when it holds every word (any case), and the words are
 * marked. The
 * address follows (?q=…), so a filtered page can be shared or reloaded.
 *
 * A line's time seeks the click-to-load player (player.js plays the link's time); the line
 * is then marked as the one playing. Once the player is loaded, the page follows the video:
 * player.js reports the time played ("player:time"), the line being said is marked
 * (aria-current) and scrolled into view, unless the reader scrolled in the last few seconds
 * (without smooth scrolling when they prefer reduced motion). The "Follow the video" button
 * (aria-pressed) turns following off and on.
 */
(function () {
    "use strict";

    var form = document.querySelector(".transcript-search");
    var input = document.getElementById("transcript-q");
    var count = document.getElementById("transcript-count");
    var sections = Array.prototype.slice.call(document.querySelectorAll(".transcript-chapter"));
    if (!form || !input || !count) {
        return;
    }
    var total = parseInt(form.dataset.paragraphs || "0", 10);
    var lines = Array.prototype.slice.call(document.querySelectorAll(".transcript .paragraph"));
    // Each line's text as written (marks removed), and in lower case for matching.
    var texts = lines.map(function (line) {
        var text = line.querySelector(".paragraph-text").textContent;
        return { text: text, lower: text.toLowerCase() };
    });
    var timer = null;

    function wordsOf(query) {
        return query
            .toLowerCase()
            .split(/\s+/)
            .filter(function (word) {
                return word.length > 0;
            });
    }

    // The line's text with every word in <mark>, built as nodes (the text is never parsed).
    function mark(holder, text, lower, words) {
        var pieces = [];
        var at = 0;
        while (words.length && at < text.length) {
            var next = -1;
            var size = 0;
            words.forEach(function (word) {
                var found = lower.indexOf(word, at);
                if (found !== -1 && (next === -1 || found < next || (found === next && word.length > size))) {
                    next = found;
                    size = word.length;
                }
            });
            if (next === -1) {
                break;
            }
            pieces.push(document.createTextNode(text.slice(at, next)));
            var marked = document.createElement("mark");
            marked.textContent = text.slice(next, next + size);
            pieces.push(marked);
            at = next + size;
        }
        pieces.push(document.createTextNode(text.slice(at)));
        holder.replaceChildren.apply(holder, pieces);
    }

    function describe(query, matching) {
        var plural = total === 1 ? "" : "s";
        if (!query) {
            count.textContent = total + " paragraph" + plural + ".";
            return;
        }
        count.textContent = matching + " of " + total + " paragraph" + plural + " hold “" + query + "”.";
    }

    function filter() {
        var query = input.value.trim().replace(/\s+/g, " ");
        var words = wordsOf(query);
        var matching = 0;
        lines.forEach(function (line, index) {
            var entry = texts[index];
            var shown = words.every(function (word) {
                return entry.lower.indexOf(word) !== -1;
            });
            line.hidden = !shown;
            if (shown) {
                matching += 1;
            }
            mark(line.querySelector(".paragraph-text"), entry.text, entry.lower, shown ? words : []);
        });
        sections.forEach(function (section) {
            section.hidden = words.length > 0 && !section.querySelector(".paragraph:not([hidden])");
            // The table of contents leads only to chapters that are shown.
            var entry = document.querySelector('.toc a[href="#' + section.id + '"]');
            if (entry) {
                entry.parentNode.hidden = section.hidden;
            }
        });
        describe(query, matching);
        var url = new URL(window.location.href);
        if (query) {
            url.searchParams.set("q", query);
        } else {
            url.searchParams.delete("q");
        }
        window.history.replaceState(null, "", url.pathname + url.search + url.hash);
    }

    input.addEventListener("input", function () {
        window.clearTimeout(timer);
        timer = window.setTimeout(filter, 120);
    });
    form.addEventListener("submit", function (event) {
        event.preventDefault();
        window.clearTimeout(timer);
        filter();
    });

    function markCurrent(line) {
        var current = document.querySelector(".paragraph[aria-current]");
        if (current === line) {
            return false;
        }
        if (current) {
            current.removeAttribute("aria-current");
        }
        line.setAttribute("aria-current", "true");
        return true;
    }

    // The line whose time was followed is the one playing.
    document.addEventListener("click", function (event) {
        var link = event.target.closest && event.target.closest(".paragraph-time[href]");
        if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
            return;
        }
        markCurrent(link.closest(".paragraph"));
    });

    // Following the video as it plays: see the comment at the top of this file.
    function followVideo(lines, markCurrent) {
        var QUIET_MS = 4000; // how long after the reader scrolls the page leaves the scrolling to them
        var player = document.getElementById("player");
        var toggle = player && player.querySelector(".player-follow");
        if (!toggle || !lines.length) {
            return;
        }
        var starts = lines.map(function (line) {
            return parseInt(line.dataset.start || "0", 10);
        });
        var following = true;
        var readerScrolledAt = -Infinity;
        var scrollingUntil = 0; // the page's own scrolling, not to be taken for the reader's
        var seconds = null;

        // The last line starting at or before `time` (the lines are in order of time).
        function lineAt(time) {
            var low = 0;
            var high = starts.length - 1;
            if (time < starts[0]) {
                return null;
            }
            while (low < high) {
                var middle = Math.ceil((low + high) / 2);
                if (starts[middle] <= time) {
                    low = middle;
                } else {
                    high = middle - 1;
                }
            }
            return lines[low];
        }

        function reducedMotion() {
            return window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
        }

        // Into the middle of what the (sticky) player leaves visible, when not already in it.
        function bringIntoView(line) {
            var top = Math.max(0, player.getBoundingClientRect().bottom);
            var box = line.getBoundingClientRect();
            if (!line.getClientRects().length || (box.top >= top && box.bottom <= window.innerHeight)) {
                return;
            }
            var middle = top + (window.innerHeight - top - box.height) / 2;
            var smooth = !reducedMotion();
            scrollingUntil = Date.now() + 3000; // or until the scroll ends, if sooner
            window.scrollTo({ top: window.scrollY + box.top - middle, behavior: smooth ? "smooth" : "auto" });
        }

        function follow(force) {
            var line = seconds === null ? null : lineAt(seconds);
            if (!line) {
                return;
            }
            var moved = markCurrent(line);
            if (force || (moved && Date.now() - readerScrolledAt > QUIET_MS)) {
                bringIntoView(line);
            }
        }

        function readerScrolled() {
            readerScrolledAt = Date.now();
        }

        player.addEventListener("player:load", function () {
            toggle.hidden = false;
        });
        player.addEventListener("player:time", function (event) {
            seconds = event.detail.seconds;
            if (following) {
                follow(false);
            }
        });
        toggle.addEventListener("click", function () {
            following = !following;
            toggle.setAttribute("aria-pressed", following ? "true" : "false");
            if (following) {
                follow(true);
            }
        });
        window.addEventListener("wheel", readerScrolled, { passive: true });
        window.addEventListener("touchmove", readerScrolled, { passive: true });
        // Keys move the page, or the focus (and the page with it); typing in a field does not.
        window.addEventListener("keydown", function (event) {
            if (!event.target.closest || !event.target.closest("input, textarea, select")) {
                readerScrolled();
            }
        });
        window.addEventListener(
            "scroll",
            function () {
                if (Date.now() > scrollingUntil) {
                    readerScrolled();
                }
            },
            { passive: true }
        );
        window.addEventListener("scrollend", function () {
            scrollingUntil = Math.min(scrollingUntil, Date.now() + 100);
        });
    }

    followVideo(lines, markCurrent);
})();
