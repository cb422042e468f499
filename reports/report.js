// Sorting, filtering and paging of the table of all findings, and opening the folded sections a
// link points into. Cells are built from text nodes only: file names, messages and snippets are
// untrusted text, never markup (paths get <wbr> after each '/', `code` spans a <code>, as
// html_markup.py renders them on the server side).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("findings-data").textContent);
  var SEVERITY_ORDER = { blocker: 0, high: 1, medium: 2, low: 3, info: 4 };
  var PAGE = 200;
  var rows = data.rows.map(function (r) {
    return { path: data.paths[r[0]], line: r[1], column: r[2], code: data.codes[r[3]], severity: r[4],
             message: r[5], snippet: r[6] };
  });
  var table = document.getElementById("findings");
  var body = table.tBodies[0];
  var text = document.getElementById("filter-text");
  var severity = document.getElementById("filter-severity");
  var code = document.getElementById("filter-code");
  var count = document.getElementById("filter-count");
  var prev = document.getElementById("page-prev");
  var next = document.getElementById("page-next");
  var sortKey = "path", sortDir = 1, page = 0, shown = rows;

  function compare(a, b) {
    var x = a[sortKey], y = b[sortKey];
    if (sortKey === "severity") { x = SEVERITY_ORDER[x]; y = SEVERITY_ORDER[y]; }
    if (x < y) return -sortDir;
    if (x > y) return sortDir;
    return a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line;
  }

  function cell(tr, value, cls) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = String(value);
    tr.appendChild(td);
    return td;
  }

  function pathCell(tr, path) {
    var td = cell(tr, "");
    var outer = document.createElement("span");
    outer.className = "path";
    path.split("/").forEach(function (segment, k) {
      if (k > 0) { outer.appendChild(document.createTextNode("/")); outer.appendChild(document.createElement("wbr")); }
      var seg = document.createElement("span");
      seg.className = "seg";
      seg.textContent = segment;
      outer.appendChild(seg);
    });
    td.appendChild(outer);
  }

  function codeCell(tr, value) {
    var td = cell(tr, "");
    var parts = String(value).split("`");
    if (parts.length % 2 === 0) parts.splice(-2, 2, parts[parts.length - 2] + "`" + parts[parts.length - 1]);
    parts.forEach(function (part, k) {
      if (k % 2 === 0) { td.appendChild(document.createTextNode(part)); return; }
      var code = document.createElement("code");
      code.textContent = part;
      td.appendChild(code);
    });
  }

  function draw() {
    var q = text.value.toLowerCase(), s = severity.value, c = code.value;
    shown = rows.filter(function (r) {
      return (!s || r.severity === s) && (!c || r.code === c) &&
        (!q || (r.path + " " + r.code + " " + r.message + " " + r.snippet).toLowerCase().indexOf(q) !== -1);
    }).sort(compare);
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(page, pages - 1);
    var fragment = document.createDocumentFragment();
    shown.slice(page * PAGE, (page + 1) * PAGE).forEach(function (r) {
      var tr = document.createElement("tr");
      pathCell(tr, r.path);
      cell(tr, r.line, "num");
      cell(tr, r.code);
      var sev = document.createElement("span");
      sev.className = "sev sev-" + r.severity;
      sev.textContent = r.severity;
      cell(tr, "").appendChild(sev);
      codeCell(tr, r.message);
      cell(tr, r.snippet, "mono snippet");
      fragment.appendChild(tr);
    });
    body.replaceChildren(fragment);
    count.textContent = shown.length + " of " + rows.length + " findings" +
      (pages > 1 ? ", page " + (page + 1) + " of " + pages : "");
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }

  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    th.setAttribute("tabindex", "0");
    function sortBy() {
      var key = th.getAttribute("data-key");
      sortDir = key === sortKey ? -sortDir : 1;
      sortKey = key;
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", sortDir === 1 ? "ascending" : "descending");
      page = 0;
      draw();
    }
    th.addEventListener("click", sortBy);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter") sortBy(); });
  });
  [text, severity, code].forEach(function (el) {
    ["input", "change"].forEach(function (type) { el.addEventListener(type, function () { page = 0; draw(); }); });
  });
  prev.addEventListener("click", function () { page -= 1; draw(); });
  next.addEventListener("click", function () { page += 1; draw(); });
  document.getElementById("all-findings").hidden = false;
  draw();

  // A link to a decision's sites opens the folded sections around them.
  function openTarget() {
    var target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    if (target) target.scrollIntoView();
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
