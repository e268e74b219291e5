// bugsleuth dashboard: live updates with plain fetch and EventSource. No framework, no inline script (strict CSP).
(function () {
  "use strict";

  function fetchText(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" }, cache: "no-store" })
      .then(function (r) { if (!r.ok) { throw new Error("HTTP " + r.status); } return r; });
  }

  // Investigations list: re-render the table body from the server every few seconds; new rows are highlighted.
  function liveList(tbody) {
    var base = tbody.getAttribute("data-live-url");
    var every = parseInt(tbody.getAttribute("data-live-interval"), 10) || 4000;
    var last = tbody.innerHTML;
    var count = document.getElementById("result-count");
    function ids() {
      var seen = {};
      tbody.querySelectorAll("tr[data-id]").forEach(function (tr) { seen[tr.getAttribute("data-id")] = tr.getAttribute("data-status"); });
      return seen;
    }
    function tick() {
      if (document.hidden) { return; }
      fetchText(base + window.location.search).then(function (r) {
        var total = r.headers.get("X-Total-Count");
        return r.text().then(function (html) {
          if (html === last) { return; }
          var before = ids();
          tbody.innerHTML = html;
          last = html;
          tbody.querySelectorAll("tr[data-id]").forEach(function (tr) {
            var id = tr.getAttribute("data-id");
            if (!(id in before) || before[id] !== tr.getAttribute("data-status")) { tr.classList.add("fresh"); }
          });
          if (count && total !== null) {
            var one = total === "1";
            var filtered = /[?&](q|repo|status|classification)=[^&]/.test(window.location.search);
            count.textContent = total + (one ? " investigation" : " investigations") + (filtered ? (one ? " matches the filters." : " match the filters.") : ".");
          }
        });
      }).catch(function () { /* the next tick retries */ });
    }
    window.setInterval(tick, every);
    document.addEventListener("visibilitychange", function () { if (!document.hidden) { tick(); } });
  }

  // Investigation detail: while it runs, server-sent events trigger a re-render of the timeline, and the page
  // reloads once the status is final so the diagnosis shows. Polling takes over if the event stream is unavailable.
  function liveDetail(article) {
    var timeline = document.getElementById("timeline");
    var progress = document.getElementById("live-progress");
    var timelineUrl = article.getAttribute("data-timeline-url");
    var statusUrl = article.getAttribute("data-status-url");
    var eventsUrl = article.getAttribute("data-events-url");
    var pending = null;
    var events = 0;
    var finished = false;
    var source = null;

    function refreshTimeline() {
      pending = null;
      fetchText(timelineUrl).then(function (r) { return r.text(); }).then(function (html) {
        timeline.innerHTML = html;
      }).catch(function () {});
    }
    function soon() { if (pending === null) { pending = window.setTimeout(refreshTimeline, 400); } }
    function finish() {
      if (finished) { return; }
      finished = true;
      if (source) { source.close(); }
      if (progress) { progress.textContent = "Finished. Loading the diagnosis…"; }
      // drop a "report received" / "rerun queued" notice: it is stale once the diagnosis shows
      var msg = new URLSearchParams(window.location.search).get("msg");
      window.setTimeout(function () {
        if (msg === "submitted" || msg === "rerun") { window.location.replace(window.location.pathname); }
        else { window.location.reload(); }
      }, 300);
    }
    function onEvent(ev) {
      events += 1;
      var kind = ev.type === "message" ? "" : ev.type;
      try {
        var data = JSON.parse(ev.data);
        if (data && typeof data === "object") {
          kind = data.kind || kind;
          if (data.tool) { kind += " " + data.tool; }
          if (data.status && ["done", "failed", "cancelled", "skipped"].indexOf(data.status) >= 0) { finish(); }
        }
      } catch (e) { /* not JSON: still counts as progress */ }
      if (progress && !finished) { progress.textContent = events + " events so far" + (kind ? " · last: " + kind : "") + "."; }
      soon();
    }
    function checkStatus() {
      if (finished) { return; }
      fetch(statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" }, cache: "no-store" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (s) {
          if (!s) { return; }
          var badge = document.getElementById("status-badge");
          if (badge && s.status) {
            badge.innerHTML = "";
            var span = document.createElement("span");
            span.className = "badge status status-" + s.status;
            span.textContent = s.status;
            badge.appendChild(span);
          }
          if (s.terminal) { finish(); }
          else if (!source) { soon(); }
        }).catch(function () {});
    }
    if (window.EventSource && eventsUrl) {
      source = new EventSource(eventsUrl);
      ["message", "start", "request", "tool_call", "phase_change", "verify", "stop", "status", "note", "end"].forEach(function (name) {
        source.addEventListener(name, onEvent);
      });
      source.addEventListener("error", function () {
        if (source && source.readyState === EventSource.CLOSED) { source = null; }
        checkStatus();
      });
    }
    window.setInterval(checkStatus, 2500);
    // a form (cancel) is being submitted: its response is the next page, so stop following this one
    document.addEventListener("submit", function () {
      finished = true;
      if (source) { source.close(); }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var tbody = document.getElementById("investigation-rows");
    if (tbody && tbody.getAttribute("data-live-url")) { liveList(tbody); }
    var article = document.getElementById("investigation");
    if (article && article.getAttribute("data-terminal") === "false") { liveDetail(article); }
    var errors = document.getElementById("form-errors");
    if (errors) { errors.focus(); }
  });
})();
