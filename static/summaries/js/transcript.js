/*
 * The transcript page: find in the transcript as you type, and mark the line being played.
 *
 * Without JavaScript the form asks the server (?q=), which hides the lines that do not hold
 * every word and marks the words. Here the same filter runs in the page on every keystroke:
 * a line is shown when it holds every word (any case), and the words are marked. The
 * address follows (?q=…), so a filtered page can be shared or reloaded.
 *
 * A line's time seeks the click-to-load player (player.js plays the link's time); the line
 * is then marked as the one playing. The page cannot follow the video as it plays on: the
 * privacy-enhanced embed reports its time only to YouTube's IFrame API script, which would
 * be a request to YouTube before any click and which the Content-Security-Policy refuses.
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
    var total = parseInt(form.dataset.lines || "0", 10);
    var lines = Array.prototype.slice.call(document.querySelectorAll(".transcript .line"));
    // Each line's text as written (marks removed), and in lower case for matching.
    var texts = lines.map(function (line) {
        var text = line.querySelector(".line-text").textContent;
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
            count.textContent = total + " line" + plural + ".";
            return;
        }
        count.textContent = matching + " of " + total + " line" + plural + " hold “" + query + "”.";
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
            mark(line.querySelector(".line-text"), entry.text, entry.lower, shown ? words : []);
        });
        sections.forEach(function (section) {
            section.hidden = words.length > 0 && !section.querySelector(".line:not([hidden])");
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

    // The line whose time was followed is the one playing.
    document.addEventListener("click", function (event) {
        var link = event.target.closest && event.target.closest(".line-time[href]");
        if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
            return;
        }
        var current = document.querySelector(".line[aria-current]");
        if (current) {
            current.removeAttribute("aria-current");
        }
        link.closest(".line").setAttribute("aria-current", "true");
    });
})();
