// incidex pages: copy buttons, file drop, live occurrences. Plain
// JavaScript, no build step; every page works without it.
"use strict";

(function () {
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  // A polite live region that tells screen-reader users what happened.
  var announcer = document.createElement("div");
  announcer.className = "visually-hidden";
  announcer.setAttribute("role", "status");
  announcer.setAttribute("aria-live", "polite");
  document.body.appendChild(announcer);
  function announce(msg) { announcer.textContent = msg; }

  // ---- Copy buttons ---------------------------------------------------
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return legacyCopy(text); });
    }
    return legacyCopy(text);
  }
  function legacyCopy(text) {
    return new Promise(function (resolve, reject) {
      var ta = document.createElement("textarea");
      ta.value = text;
      ta.setAttribute("readonly", "");
      ta.className = "visually-hidden";
      document.body.appendChild(ta);
      ta.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      document.body.removeChild(ta);
      if (ok) { resolve(); } else { reject(new Error("copy refused")); }
    });
  }
  function wireCopy(btn, getText) {
    btn.hidden = false;
    btn.addEventListener("click", function () {
      var text = getText();
      copyText(text).then(function () {
        btn.textContent = "Copied";
        btn.dataset.copied = text;
        announce("Copied to the clipboard");
        setTimeout(function () { btn.textContent = "Copy"; }, 2000);
      }, function () {
        btn.textContent = "Press Ctrl+C";
        announce("Could not copy; select the text and copy it by hand");
      });
    });
  }
  document.querySelectorAll("button.copy[data-copy]").forEach(function (btn) {
    wireCopy(btn, function () { return btn.dataset.copy; });
  });
  document.querySelectorAll(".md pre").forEach(function (pre) {
    var btn = document.createElement("button");
    btn.type = "button";
    btn.className = "copy";
    btn.textContent = "Copy";
    btn.setAttribute("aria-label", "Copy code block");
    pre.appendChild(btn);
    var code = pre.querySelector("code") || pre;
    wireCopy(btn, function () { return code.textContent.replace(/\n$/, ""); });
  });

  // ---- Drop a file on a text box --------------------------------------
  document.querySelectorAll("textarea.dropzone").forEach(function (ta) {
    var form = ta.form;
    var input = form && form.querySelector('input[type="file"]');
    if (!input) { return; }
    var hint = form.querySelector(".drop-hint");
    if (hint) { hint.hidden = false; }
    ta.addEventListener("dragover", function (e) { e.preventDefault(); ta.classList.add("dragover"); });
    ta.addEventListener("dragleave", function () { ta.classList.remove("dragover"); });
    ta.addEventListener("drop", function (e) {
      ta.classList.remove("dragover");
      if (!e.dataTransfer || !e.dataTransfer.files.length) { return; }
      e.preventDefault();
      input.files = e.dataTransfer.files;
      announce(e.dataTransfer.files[0].name + " will be sent");
      if (hint) { hint.textContent = e.dataTransfer.files[0].name + " will be sent instead of the text."; }
    });
  });

  // ---- Match feedback (analyze page) ----------------------------------
  // Sent in the background; without JavaScript the form posts and a
  // confirmation page answers.
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (!f.classList || !f.classList.contains("fb")) { return; }
    var btn = e.submitter;
    if (!btn || !window.fetch || !window.FormData) { return; }
    e.preventDefault();
    var body = new URLSearchParams(new FormData(f));
    body.set("verdict", btn.value);
    f.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    fetch(f.action, {
      method: "POST", credentials: "same-origin", body: body,
      headers: { "X-CSRF-Token": csrf, "Accept": "application/json" }
    }).then(function (r) {
      if (!r.ok) {
        return r.json().catch(function () { return {}; }).then(function (j) { throw new Error(j.error || ("HTTP " + r.status)); });
      }
      var done = document.createElement("span");
      done.className = "fb-done";
      done.setAttribute("role", "status");
      done.textContent = btn.value === "up" ? "Thanks: marked as the right incident." : "Thanks: marked as a wrong match; it will score lower.";
      f.replaceWith(done);
    }).catch(function (err) {
      f.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
      var msg = f.querySelector(".fb-error");
      if (!msg) { msg = document.createElement("span"); msg.className = "fb-error error"; msg.setAttribute("role", "alert"); f.appendChild(msg); }
      msg.textContent = "Not recorded: " + err.message;
    });
  });

  // ---- Live occurrences -----------------------------------------------
  var table = document.getElementById("live");
  if (!table || !window.EventSource) { return; }
  var tbody = table.tBodies[0];
  var tpl = document.getElementById("live-row");
  var status = document.getElementById("live-status");
  var canAck = table.dataset.canAck === "1";
  var next = table.dataset.next || "/live";
  var titles = {};
  tbody.querySelectorAll("tr[data-group]").forEach(function (tr) {
    var a = tr.querySelector("td a");
    if (a) { titles[tr.dataset.incident] = a.textContent; }
  });
  var labelOrder = ["cluster", "namespace", "app", "workload", "pod", "container", "node", "host"];

  function setStatus(text, cls) {
    status.textContent = text;
    status.className = "status " + cls;
  }
  function ago(iso) {
    var s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (s < 60) { return s + "s ago"; }
    if (s < 3600) { return Math.round(s / 60) + "m ago"; }
    if (s < 86400) { return Math.round(s / 3600) + "h ago"; }
    return Math.round(s / 86400) + "d ago";
  }
  function refreshTimes() {
    tbody.querySelectorAll("td.last time").forEach(function (t) {
      if (!t.title) { t.title = t.textContent; }
      t.textContent = ago(t.getAttribute("datetime"));
    });
  }
  function fillLabels(ul, labels) {
    ul.textContent = "";
    var keys = Object.keys(labels || {}).filter(function (k) { return labels[k] !== ""; });
    keys.sort(function (a, b) {
      var ia = labelOrder.indexOf(a), ib = labelOrder.indexOf(b);
      if (ia < 0) { ia = 99; }
      if (ib < 0) { ib = 99; }
      return ia !== ib ? ia - ib : (a < b ? -1 : 1);
    });
    keys.forEach(function (k) {
      var li = document.createElement("li");
      var kk = document.createElement("span"); kk.className = "k"; kk.textContent = k;
      var vv = document.createElement("span"); vv.className = "v"; vv.textContent = labels[k];
      li.appendChild(kk); li.appendChild(document.createTextNode("=")); li.appendChild(vv);
      ul.appendChild(li);
    });
  }
  // A row groups an incident's occurrences on one resource, one per
  // signature (li[data-id] in ul.sigs); its Acknowledge acknowledges all.
  function ackCell(tr) {
    var td = tr.querySelector("td.ackcell");
    var sigs = [].slice.call(tr.querySelectorAll("ul.sigs li"));
    var open = sigs.filter(function (li) { return !li.dataset.acked && !li.dataset.closed; });
    td.textContent = "";
    if (open.length === 0) {
      if (sigs.some(function (li) { return li.dataset.acked; })) {
        var s = document.createElement("span");
        s.className = "acked";
        s.textContent = "Acknowledged" + (tr.dataset.ackedBy ? " by " + tr.dataset.ackedBy : "");
        td.appendChild(s);
      } else {
        td.textContent = "closed";
      }
      return;
    }
    if (!canAck) {
      var a = document.createElement("a");
      a.href = "/login?next=" + encodeURIComponent(next);
      a.textContent = "Log in to acknowledge";
      td.appendChild(a);
      return;
    }
    var ids = open.map(function (li) { return li.dataset.id; });
    var f = document.createElement("form");
    f.method = "post";
    f.className = "ack";
    f.action = "/api/v1/occurrences/" + ids[0] + "/ack?by=web";
    f.dataset.ids = ids.join(" ");
    [["csrf", csrf], ["next", next]].forEach(function (kv) {
      var i = document.createElement("input");
      i.type = "hidden"; i.name = kv[0]; i.value = kv[1];
      f.appendChild(i);
    });
    var b = document.createElement("button");
    b.type = "submit";
    b.textContent = "Acknowledge";
    b.setAttribute("aria-label", "Acknowledge " + tr.dataset.incident + " on this resource");
    f.appendChild(b);
    td.appendChild(f);
  }
  function rowFor(key) {
    var rows = tbody.querySelectorAll("tr[data-group]");
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].dataset.group === key) { return rows[i]; }
    }
    return null;
  }
  // sigFor returns the row's item for an occurrence, adding it if new.
  function sigFor(tr, occ) {
    var id = String(occ.id).replace(/[^0-9]/g, "");
    var li = tr.querySelector('ul.sigs li[data-id="' + id + '"]');
    if (li) { return li; }
    li = document.createElement("li");
    li.dataset.id = id;
    var c = document.createElement("code"); c.textContent = occ.signature_id;
    var n = document.createElement("span"); n.className = "n";
    li.appendChild(c); li.appendChild(document.createTextNode(" ")); li.appendChild(n);
    tr.querySelector("ul.sigs").appendChild(li);
    return li;
  }
  function setSig(tr, occ) {
    var li = sigFor(tr, occ);
    li.dataset.count = occ.count;
    li.querySelector(".n").textContent = "×" + occ.count;
    if (occ.acked_at) { li.dataset.acked = "1"; tr.dataset.ackedBy = occ.acked_by || tr.dataset.ackedBy || ""; }
    if (occ.status === "closed") { li.dataset.closed = "1"; } else { delete li.dataset.closed; }
    var total = 0, closed = true;
    tr.querySelectorAll("ul.sigs li").forEach(function (x) {
      total += Number(x.dataset.count) || 0;
      if (!x.dataset.closed) { closed = false; }
    });
    tr.querySelector("td.count").textContent = total;
    tr.classList.toggle("closed", closed);
    ackCell(tr);
  }
  // The title of an incident this page has not shown yet.
  function loadTitle(id) {
    titles[id] = id;
    fetch("/api/v1/incidents/" + encodeURIComponent(id), { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (inc) {
        if (!inc || !inc.title) { return; }
        titles[id] = inc.title;
        tbody.querySelectorAll("tr[data-incident]").forEach(function (tr) {
          if (tr.dataset.incident === id) { tr.querySelector("td a").textContent = inc.title; }
        });
      })
      .catch(function () { /* keep the id */ });
  }
  function upsert(ev) {
    var occ = ev.occurrence;
    var key = occ.incident_id + " " + occ.resource;
    var tr = rowFor(key);
    if (!tr) {
      if (ev.type === "closed") { return; }
      tr = tpl.content.firstElementChild.cloneNode(true);
      tr.dataset.group = key;
      tr.dataset.incident = occ.incident_id;
      var a = tr.querySelector("td a");
      a.href = "/incidents/" + encodeURIComponent(occ.incident_id);
      a.textContent = titles[occ.incident_id] || occ.incident_id;
      if (!titles[occ.incident_id]) { loadTitle(occ.incident_id); }
      tr.querySelector("td code").textContent = occ.incident_id;
      fillLabels(tr.querySelector("ul.labels"), occ.labels);
    }
    tbody.insertBefore(tr, tbody.firstChild);
    var sample = tr.querySelector("code.sample");
    if (!sample) {
      sample = document.createElement("code"); sample.className = "sample";
      tr.querySelector("td.where").appendChild(sample);
    }
    if (occ.samples && occ.samples[0]) { sample.textContent = occ.samples[0]; }
    var t = tr.querySelector("td.last time");
    if (!t.getAttribute("datetime") || Date.parse(occ.last_seen) >= Date.parse(t.getAttribute("datetime"))) {
      t.setAttribute("datetime", occ.last_seen);
      t.title = occ.last_seen;
      t.textContent = ago(occ.last_seen);
    }
    setSig(tr, occ);
    tr.classList.remove("flash");
    void tr.offsetWidth; // restart the animation
    tr.classList.add("flash");
    var empty = tbody.querySelector("tr.empty-row");
    if (empty) { empty.hidden = true; }
    announce(occ.incident_id + " " + ev.type + ", count " + tr.querySelector("td.count").textContent);
  }

  // Acknowledge without leaving the page: every open occurrence of the row.
  tbody.addEventListener("submit", function (e) {
    var f = e.target;
    if (!f.classList.contains("ack")) { return; }
    e.preventDefault();
    var tr = f.closest("tr");
    var btn = f.querySelector("button");
    btn.disabled = true;
    var ids = (f.dataset.ids || "").split(" ").filter(Boolean);
    if (ids.length === 0) { ids = [f.action.replace(/.*occurrences\/([0-9]+)\/ack.*/, "$1")]; }
    Promise.all(ids.map(function (id) {
      return fetch("/api/v1/occurrences/" + encodeURIComponent(id) + "/ack?by=web", {
        method: "POST", credentials: "same-origin",
        headers: { "X-CSRF-Token": csrf, "Accept": "application/json" }
      }).then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return r.json();
      });
    })).then(function (list) {
      list.forEach(function (occ) { setSig(tr, occ); });
      announce("Acknowledged");
    }).catch(function (err) {
      btn.disabled = false;
      announce("Acknowledge failed: " + err.message);
      setStatus("Acknowledge failed: " + err.message, "disconnected");
    });
  });

  var es = new EventSource(table.dataset.stream);
  es.addEventListener("open", function () {
    setStatus("Live: new and updated occurrences appear as they happen.", "connected");
    document.body.dataset.live = "connected";
  });
  es.addEventListener("error", function () {
    setStatus("Disconnected; reconnecting…", "disconnected");
    document.body.dataset.live = "disconnected";
  });
  es.addEventListener("occurrence", function (m) {
    try { upsert(JSON.parse(m.data)); } catch (err) { /* ignore a malformed event */ }
  });
  refreshTimes();
  setInterval(refreshTimes, 15000);
})();
