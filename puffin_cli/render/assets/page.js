// puffin table --html: draws each table's charts (uPlot) and lists from the JSON in #data.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var root = document.getElementById("tables");
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                "#7f7f7f", "#bcbd22", "#17becf"];
  window.puffinCharts = [];

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function when(ms) {
    return new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC";
  }
  function count(v) {
    if (v === null || v === undefined) return "–";
    var a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(a >= 1e10 ? 0 : 1) + "G";
    if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 0 : 1) + "M";
    if (a >= 1e4) return (v / 1e3).toFixed(a >= 1e5 ? 0 : 1) + "k";
    return String(Math.round(v * 1000) / 1000);
  }

  function chart(section, t, ti, name, title, series, extra) {
    var n = t.id.length;
    var wrap = el("div", {"class": "chart", "data-chart": name});
    var tip = el("div", {"class": "tip", "hidden": ""});
    section.appendChild(wrap);
    var xs = [];
    for (var i = 0; i < n; i++) xs.push(i);
    var opts = {
      title: title,
      width: Math.max(Math.min(section.clientWidth || 1000, 1400) - 20, 400),
      height: 220,
      scales: {x: {time: false, auto: false, range: function () { return [-0.5, n - 0.5]; }}},
      legend: {live: true},
      axes: [
        {label: "snapshot (sequence number)", values: function (u, splits) {
          return splits.map(function (s) {
            return Number.isInteger(s) && s >= 0 && s < n ? "#" + t.seq[s] : "";
          });
        }},
        {size: 60, values: function (u, splits) { return splits.map(count); }}
      ],
      series: [{label: "snapshot", value: function (u, i) {
        return i === null || i === undefined ? "" : t.id[i];
      }}].concat(series.map(function (s, k) {
        return Object.assign({label: s.label, stroke: COLORS[k % COLORS.length],
                              width: 1.5, spanGaps: false,
                              points: {show: n <= 200, size: 5},
                              value: function (u, v) { return count(v); }}, s.style || {});
      })),
      hooks: {setCursor: [function (u) {
        var i = u.cursor.idx;
        if (i === null || i === undefined) { tip.hidden = true; return; }
        tip.hidden = false;
        tip.textContent = "snapshot " + t.id[i] + (t.current[i] ? " (current)" : "") +
          " · " + (t.op[i] || "no operation") + " · " + when(t.time[i]);
        var left = Math.min(u.cursor.left + 60, u.width - 300);
        tip.style.left = Math.max(left, 0) + "px";
      }]}
    };
    Object.assign(opts, extra || {});
    var u = new uPlot(opts, [xs].concat(series.map(function (s) { return s.values; })), wrap);
    wrap.appendChild(tip);
    wrap.setAttribute("data-points", String(u.data[0].length));
    window.puffinCharts.push(u);
    return u;
  }

  function header(section, t, ti) {
    section.appendChild(el("h1", {}, t.path));
    var facts = el("p", {"class": "facts"});
    facts.textContent = "metadata " + t.metadata + " · " +
      (t.format === null ? "metadata unreadable" : "format v" + t.format) + " · " +
      t.id.length + " snapshot" + (t.id.length === 1 ? "" : "s") + " · " + t.errors +
      " error(s), " + t.warnings + " warning(s)";
    section.appendChild(facts);
  }

  function snapshotList(section, t, ti) {
    var details = el("details", {"open": ""});
    details.appendChild(el("summary", {}, "Snapshots (oldest first)"));
    var table = el("table", {"class": "snapshots"});
    var head = el("tr");
    ["snapshot", "committed", "seq", "operation", "live rows", "data files", "DVs",
     "deleted rows", "statistics", "findings"].forEach(function (h) {
      head.appendChild(el("th", {}, h));
    });
    table.appendChild(head);
    for (var i = 0; i < t.id.length; i++) {
      var row = el("tr", {"id": "s-" + ti + "-" + t.id[i]});
      var stats = t.stats[i] === "own" ? "own (Spark and Trino)" :
        t.stats[i] === "stale" ? "an ancestor's (Trino; Spark: none)" : "none";
      [t.id[i] + (t.current[i] ? " *" : ""), when(t.time[i]), t.seq[i], t.op[i],
       t.rows[i].toLocaleString("en"), t.files[i].toLocaleString("en"),
       t.dvs[i].toLocaleString("en"), t.deleted[i].toLocaleString("en"), stats,
       t.findingsPer[i]].forEach(function (c, k) {
        row.appendChild(el("td", k >= 4 && k <= 7 || k === 9 ? {"class": "n"} : {}, c));
      });
      if (t.stats[i] === "none") row.className = "nostats";
      table.appendChild(row);
    }
    details.appendChild(table);
    section.appendChild(details);
  }

  function findingList(section, t, ti) {
    section.appendChild(el("h2", {}, "Findings"));
    if (!t.findings.length) { section.appendChild(el("p", {}, "No findings.")); return; }
    var table = el("table", {"class": "findings"});
    var head = el("tr");
    ["severity", "code", "snapshot", "message"].forEach(function (h) {
      head.appendChild(el("th", {}, h));
    });
    table.appendChild(head);
    t.findings.forEach(function (f) {
      var row = el("tr", {"class": "sev-" + f.severity});
      row.appendChild(el("td", {}, f.severity));
      row.appendChild(el("td", {}, f.code));
      var cell = el("td");
      if (f.snapshot !== null && t.id.indexOf(f.snapshot) >= 0) {
        cell.appendChild(el("a", {"href": "#s-" + ti + "-" + f.snapshot}, f.snapshot));
      } else {
        cell.textContent = f.snapshot === null ? "–" : f.snapshot;
      }
      row.appendChild(cell);
      row.appendChild(el("td", {}, f.message));
      table.appendChild(row);
    });
    section.appendChild(table);
    if (t.findingsLeftOut) {
      section.appendChild(el("p", {"class": "note"}, t.findingsLeftOut +
        " more finding(s) not listed (puffin table --json has them all)."));
    }
  }

  data.tables.forEach(function (t, ti) {
    var section = el("section", {"class": "table", "data-snapshots": String(t.id.length)});
    root.appendChild(section);
    header(section, t, ti);
    if (!t.id.length) {
      section.appendChild(el("p", {"class": "empty"},
        "No snapshot to show: the table has no snapshot (or none was selected)."));
      findingList(section, t, ti);
      return;
    }
    chart(section, t, ti, "rows", "Rows", [
      {label: "live rows", values: t.rows},
      {label: "deleted rows (deletion vectors)", values: t.deleted},
      {label: "rows removed by replaced data files", values: t.removed}]);
    chart(section, t, ti, "files", "Files", [
      {label: "live data files", values: t.files},
      {label: "deletion vectors", values: t.dvs},
      {label: "files holding them", values: t.dvFiles}]);
    var spark = t.stats.map(function (s) { return s === "own" ? 1 : 0; });
    var trino = t.stats.map(function (s) { return s === "none" ? 0 : 1; });
    chart(section, t, ti, "statistics", "Statistics found (1) or none (0)", [
      {label: "Spark (the snapshot's own file)", values: spark,
       style: {paths: uPlot.paths.stepped({align: 1})}},
      {label: "Trino (its own or the nearest ancestor's)", values: trino,
       style: {paths: uPlot.paths.stepped({align: 1}), dash: [6, 4]}}],
      {scales: {x: {time: false, auto: false, range: function () {
        return [-0.5, t.id.length - 0.5]; }}, y: {range: [-0.1, 1.1]}}});
    if (t.columns.length) {
      chart(section, t, ti, "ndv", "NDV per column (from the statistics file Trino uses)",
        t.columns.map(function (c, k) { return {label: c, values: t.ndv[k]}; }));
      if (t.columnsLeftOut) {
        section.appendChild(el("p", {"class": "note"}, t.columnsLeftOut +
          " more column(s) not charted."));
      }
    } else {
      section.appendChild(el("p", {"class": "note"},
        "No NDV to chart: no snapshot has statistics with an ndv per column."));
    }
    chart(section, t, ti, "freshness", "Statistics freshness (behind the snapshot)", [
      {label: "snapshots behind", values: t.behind},
      {label: "hours behind", values: t.hoursBehind}]);
    chart(section, t, ti, "findings", "Findings per snapshot", [
      {label: "findings", values: t.findingsPer,
       style: {paths: uPlot.paths.bars({size: [0.6, 40]}), fill: "#d6272855"}}]);
    findingList(section, t, ti);
    snapshotList(section, t, ti);
  });
  document.body.setAttribute("data-ready", "1");
})();
