// report.html's only script, inlined into the page (nothing is fetched): a click
// on a column header sorts its table (again: the other way); a table whose rows
// name configs gets a "family" menu that shows one family's rows. Without
// JavaScript the page reads the same, unsorted and unfiltered.
(function () {
  "use strict";
  var DASHES = { "": 1, "-": 1, "\u2013": 1, "\u2014": 1 };

  // A cell's number: "1,234" -> 1234, "1.80x (1.54-2.05)" -> 1.8, "32/32" -> 32,
  // "100%" -> 100; null when the cell does not start with one.
  function number(text) {
    var m = text.replace(/,/g, "").match(/^\s*[<>~]?\s*(-?\d*\.?\d+(?:e[-+]?\d+)?)/i);
    return m ? parseFloat(m[1]) : null;
  }

  function blank(text) {
    return DASHES.hasOwnProperty(text.trim());
  }

  function sortTable(table, col, header) {
    var body = table.tBodies[0];
    if (!body) return;
    var rows = Array.prototype.slice.call(body.rows);
    var cells = rows.map(function (r) {
      var c = r.cells[col];
      return c ? (c.getAttribute("data-v") || c.textContent).trim() : "";
    });
    var numeric = cells.every(function (t) { return blank(t) || number(t) !== null; });
    var up = header.getAttribute("aria-sort") !== "ascending";
    var order = rows.map(function (r, i) { return i; });
    order.sort(function (a, b) {
      var x = cells[a], y = cells[b];
      if (blank(x) !== blank(y)) return blank(x) ? 1 : -1; // blanks last, always
      var d = numeric && !blank(x) ? number(x) - number(y) : x.localeCompare(y);
      return (up ? d : -d) || a - b; // stable: ties keep the page's order
    });
    order.forEach(function (i) { body.appendChild(rows[i]); });
    Array.prototype.forEach.call(header.parentNode.cells, function (th) {
      th.removeAttribute("aria-sort");
    });
    header.setAttribute("aria-sort", up ? "ascending" : "descending");
  }

  function makeSortable(table) {
    var head = table.tHead && table.tHead.rows[0];
    if (!head) return;
    Array.prototype.forEach.call(head.cells, function (th, col) {
      th.tabIndex = 0;
      th.title = "sort by this column (click again: the other way)";
      th.classList.add("sortable");
      th.addEventListener("click", function () { sortTable(table, col, th); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          sortTable(table, col, th);
        }
      });
    });
  }

  function addFamilyFilter(table) {
    var rows = table.querySelectorAll("tbody tr[data-family]");
    var families = [];
    Array.prototype.forEach.call(rows, function (r) {
      var f = r.getAttribute("data-family");
      if (families.indexOf(f) < 0) families.push(f);
    });
    if (families.length < 2) return;
    families.sort();
    var label = document.createElement("label");
    label.className = "filter";
    label.appendChild(document.createTextNode("family "));
    var menu = document.createElement("select");
    ["all"].concat(families).forEach(function (f) {
      var o = document.createElement("option");
      o.value = f;
      o.textContent = f;
      menu.appendChild(o);
    });
    menu.addEventListener("change", function () {
      Array.prototype.forEach.call(rows, function (r) {
        r.hidden = menu.value !== "all" && r.getAttribute("data-family") !== menu.value;
      });
    });
    label.appendChild(menu);
    var box = table.parentNode;
    box.parentNode.insertBefore(label, box);
  }

  Array.prototype.forEach.call(document.querySelectorAll("table"), function (t) {
    makeSortable(t);
    addFamilyFilter(t);
  });
})();
