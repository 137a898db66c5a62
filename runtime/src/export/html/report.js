(function () {
  "use strict";
  var json = function (id) { return JSON.parse(document.getElementById(id).textContent); };
  var data = json("tp-data"), config = json("tp-config"), n = data.length;
  var lines = function (id) { return n ? document.getElementById(id).textContent.split("\n") : []; };
  var rowHtml = lines("tp-rows"), sectionHtml = lines("tp-sections");
  var table = document.getElementById("table"), tbody = table.tBodies[0];
  var buttons = Array.prototype.slice.call(table.tHead.querySelectorAll("button"));
  var sectionsBox = document.getElementById("sections");
  var moreSections = document.getElementById("more-sections");
  var moreRows = document.getElementById("more-rows"), shown = document.getElementById("shown");
  var order = data.map(function (_, i) { return i; });
  var sortState = { button: null, desc: false }, filter = "", limit = config.rowLimit;
  var made = [], madeCount = 0, maxMade = -1, nextBatch = 0;

  function byName(a, b) { return data[a][0] < data[b][0] ? -1 : data[a][0] > data[b][0] ? 1 : a - b; }

  // The table: the first `limit` rows of the current order and filter
  // (a table of 10,000 rows takes seconds to lay out; "show more" adds rows).
  function renderRows() {
    var pick = filter ? order.filter(function (i) { return data[i][0].toLowerCase().indexOf(filter) >= 0; }) : order;
    var count = Math.min(pick.length, limit);
    var html = new Array(count);
    for (var j = 0; j < count; j++) { html[j] = rowHtml[pick[j]]; }
    tbody.innerHTML = html.join("");
    shown.textContent = count < pick.length ? "showing " + count + " of " + pick.length + (filter ? " matching" : "") + " rows" : "";
    moreRows.hidden = count >= pick.length;
  }

  function sortBy(button, desc) {
    var k = +button.getAttribute("data-k");
    order.sort(k === 0
      ? function (a, b) { return desc ? byName(b, a) : byName(a, b); }
      : function (a, b) {
          var x = data[a][k], y = data[b][k];
          return x !== y ? (desc ? y - x : x - y) : byName(a, b);
        });
    buttons.forEach(function (b) { b.parentNode.removeAttribute("aria-sort"); });
    button.parentNode.setAttribute("aria-sort", desc ? "descending" : "ascending");
    sortState = { button: button, desc: desc };
    renderRows();
  }

  // Sections: inserted in site order when first needed.
  function ensure(i) {
    if (!(i >= 0 && i < n)) { return null; }
    if (!made[i]) {
      var tmp = document.createElement("div");
      tmp.innerHTML = sectionHtml[i];
      var el = tmp.firstChild, next = null;
      for (var j = i + 1; j <= maxMade && !next; j++) { if (made[j]) { next = made[j]; } }
      sectionsBox.insertBefore(el, next);
      made[i] = el;
      madeCount++;
      maxMade = Math.max(maxMade, i);
    }
    return made[i];
  }

  function moreBatch() {
    var end = Math.min(n, nextBatch + config.sectionBatch);
    for (; nextBatch < end; nextBatch++) { ensure(nextBatch); }
    moreSections.hidden = nextBatch >= n;
    moreSections.textContent = "show more functions (" + nextBatch + " of " + n + " listed)";
  }

  function indexOfHash(h) { var m = /^#s(\d+)$/.exec(h); return m ? +m[1] : -1; }

  function reveal(hash) {
    var el = ensure(indexOfHash(hash));
    if (el) {
      Array.prototype.forEach.call(document.querySelectorAll("section.hl"), function (s) { s.classList.remove("hl"); });
      el.classList.add("hl");
      el.scrollIntoView();
    }
    return el;
  }

  // Make a section exist before the browser follows a link to it.
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a[href^='#s']");
    if (a) { ensure(indexOfHash(a.getAttribute("href"))); }
  }, true);
  window.addEventListener("hashchange", function () { reveal(location.hash); });
  buttons.forEach(function (b) {
    b.addEventListener("click", function () {
      var first = b.getAttribute("data-k") === "0";
      sortBy(b, sortState.button === b ? !sortState.desc : !first);
    });
  });
  document.getElementById("filter").addEventListener("input", function (e) {
    filter = e.target.value.toLowerCase();
    renderRows();
  });
  moreRows.addEventListener("click", function () { limit += config.rowLimit; renderRows(); });
  moreSections.addEventListener("click", moreBatch);

  renderRows();
  moreBatch();
  if (indexOfHash(location.hash) >= 0) { reveal(location.hash); }

  function selftest() {
    var t0 = performance.now(), fails = [], out = document.getElementById("selftest");
    function fail(m) { if (fails.length < 6) { fails.push(m); } }
    function rendered() { return Array.prototype.map.call(tbody.rows, function (r) { return +r.getAttribute("data-i"); }); }
    // The rows shown are the first ones of the whole data sorted by `cmp`.
    function sortedBy(what, cmp) {
      var shownRows = rendered(), all = order.slice().sort(cmp);
      if (shownRows.length !== Math.min(n, limit)) { fail(what + ": " + shownRows.length + " rows shown"); }
      for (var i = 0; i < shownRows.length; i++) {
        if (cmp(shownRows[i], all[i]) !== 0) { fail(what + ": row " + i + " out of order"); return false; }
      }
      return true;
    }
    function click(label) {
      var b = buttons.filter(function (x) { return x.textContent === label; })[0];
      if (!b) { fail("no column " + label); return 0; }
      b.click();
      return +b.getAttribute("data-k");
    }
    try {
      if (rowHtml.length !== n || sectionHtml.length !== n) { fail(rowHtml.length + " rows and " + sectionHtml.length + " sections for " + n + " sites"); }
      // Every site's row drills down to its section, every section is its
      // site's, and every link on the page (rows, sections) resolves.
      for (var r = 0; r < n; r++) {
        if (rowHtml[r].indexOf("<tr data-i=\x22" + r + "\x22><td><a href=\x22#s" + r + "\x22>") !== 0) { fail("row " + r + " does not link to its section"); }
      }
      var targets = {}, nlinks = 0;
      var note = function (list) {
        nlinks += list.length;
        for (var j = 0; j < list.length; j++) { targets[list[j].getAttribute("href")] = true; }
      };
      note(document.querySelectorAll("a[href^='#']"));
      for (var s = 0; s < n; s++) {
        var sec = ensure(s), h = sec && sec.querySelector("h3");
        if (!sec || sec.id !== "s" + s || !h || h.textContent !== data[s][0]) { fail("section " + s + " missing or not its site's"); }
        if (sec) { note(sec.querySelectorAll("a[href^='#']")); }
      }
      Object.keys(targets).forEach(function (t) {
        if (!document.getElementById(t.slice(1))) { fail("link to missing " + t); }
      });
      Array.prototype.forEach.call(tbody.rows, function (row) {
        var i = +row.getAttribute("data-i"), a = row.querySelector("a");
        if (!a || a.textContent !== data[i][0]) { fail("row " + i + " shows another name"); }
      });
      // Sorting: each click shows the right first rows.
      var k = click("calls");
      sortedBy("calls descending", function (a, b) { return data[b][k] - data[a][k] || byName(a, b); });
      var desc = rendered().join(",");
      click("calls");
      sortedBy("calls ascending", function (a, b) { return data[a][k] - data[b][k] || byName(a, b); });
      var distinct = data.some(function (d) { return d[k] !== data[0][k]; });
      if (distinct && rendered().join(",") === desc) { fail("second click did not reverse the order"); }
      k = click("self");
      sortedBy("self descending", function (a, b) { return data[b][k] - data[a][k] || byName(a, b); });
      click("name");
      sortedBy("name", byName);
      if (buttons[0].parentNode.getAttribute("aria-sort") !== "ascending") { fail("name header not marked ascending"); }
      // A click on the last shown row's name goes to its section.
      if (n > 0) {
        var last = tbody.rows[tbody.rows.length - 1];
        last.querySelector("a").click();
        var want = "s" + last.getAttribute("data-i");
        if (location.hash !== "#" + want || !document.getElementById(want)) { fail("clicking a name did not open its section"); }
      }
      // Nothing but the page's own elements, and no injected script ran.
      var allowed = /^(A|B|BUTTON|COL|COLGROUP|CODE|DIV|H1|H2|H3|HEADER|INPUT|LABEL|NOSCRIPT|P|SCRIPT|SECTION|SPAN|STRONG|TABLE|TBODY|TD|TH|THEAD|TR)$/;
      var all = document.body.getElementsByTagName("*");
      for (var e = 0; e < all.length; e++) {
        if (!allowed.test(all[e].tagName)) { fail("unexpected <" + all[e].tagName.toLowerCase() + "> element"); break; }
      }
      if (document.scripts.length !== 5) { fail(document.scripts.length + " script elements, expected 5"); }
      if (window.tickprofInjected !== undefined) { fail("injected script ran"); }
      var ms = performance.now() - t0;
      out.textContent = fails.length
        ? "FAIL: " + fails.join("; ")
        : "PASS: " + n + " sites, " + tbody.rows.length + " rows shown, " + madeCount + " sections, " + nlinks + " links to " +
          Object.keys(targets).length + " anchors resolved, sorting by calls, self and name correct; page ready at " +
          t0.toFixed(0) + " ms, self-test " + ms.toFixed(0) + " ms";
    } catch (err) {
      out.textContent = "FAIL: exception " + err;
    }
    out.hidden = false;
  }

  if (/selftest/.test(location.hash + location.search)) { selftest(); }
})();
