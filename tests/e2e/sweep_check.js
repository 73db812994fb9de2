// Measures a runmon sweep page (report --sweep, or report S1 S2 ...) in headless Chromium over
// DevTools, as report_check.js does the single report: node sweep_check.js FILE WIDTH PNG
// [CHROMIUM]. Prints one JSON line:
//  scrollWidth: the document's (no page scroll sideways at the width);
//  overlaps: pairs of visible text boxes that overlap, in each panel (the bar labels and
//    values, the charts' axis labels, the legend's entries, table cells are not text boxes
//    that can overlap: they are laid out by the table);
//  minText: the smallest visible text in CSS px;
//  chartHeights / minChartHeight: each svg.chart's drawn height;
//  tables: per table whether it scrolls sideways and whether a scroll cue shows
//    (cueMissing / cueSpurious as in report_check.js);
//  legend: clicking the first run's entry hides every line of that run and no other, a second
//    click shows them again;
//  sort: a click on the energy header orders the rows by energy (ascending), a second click
//    descending; a click on the first parameter's header orders by it;
//  phaseOrder / phaseCellChars / height: the phase table's phases as listed, its longest
//    phase cell in characters, the document's height;
//  ok/charts: the page's self-check; scriptErrors;
//  metricCharts: the metric curves' charts (svg.mchart) drawn;
//  pareto: its points (.pa .pt), the smallest distance between two points' centres in a chart
//    (after the page's nudging), how many were nudged, the points outside their plot, the front
//    line's on-points and drawn width; tip: a tap on the first point shows a box naming its
//    run as the bars name it (N · LABEL);
//  pcoords: its lines; a drag along the first axis over its top half keeps exactly the runs
//    whose value there lies in the range dragged (the lines' data-y), a tap on the axis keeps
//    them all again.
'use strict';
const puppeteer = require('puppeteer-core');
const [file, width, png, exe] = process.argv.slice(2);
(async () => {
    const browser = await puppeteer.launch({
        executablePath: exe || '/usr/bin/chromium',
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions',
            '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
        const page = await browser.newPage();
        const errors = [];
        page.on('pageerror', (e) => errors.push(String(e && e.message || e)));
        const w = Number(width);
        await page.setViewport(w < 600
            ? {width: w, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 3}
            : {width: w, height: 1000, deviceScaleFactor: 1});
        await page.goto('file://' + file, {waitUntil: 'load'});
        const m = await layout(page);
        // The phase table's phases in the order shown (issue 36 §9: the runs' order, not by
        // name), its longest phase cell in characters, and the page's height.
        Object.assign(m, await page.evaluate(() => {
            const seen = [];
            let longest = 0;
            document.querySelectorAll('#t-phases tbody tr td:first-child').forEach((td) => {
                const name = td.textContent;
                if (!seen.includes(name)) seen.push(name);
                longest = Math.max(longest, Array.from(name).length);
            });
            return {phaseOrder: seen, phaseCellChars: longest,
                height: document.documentElement.scrollHeight};
        }));
        m.legend = await legend(page);
        m.pareto = await pareto(page);
        m.pcoords = await pcoords(page);
        m.sort = await sort(page);
        await page.screenshot({path: png, fullPage: true});
        m.scriptErrors = errors;
        process.stdout.write(JSON.stringify(m) + '\n');
    } finally {
        await browser.close();
    }
})().catch((e) => {
    process.stderr.write(String(e && e.stack || e) + '\n');
    process.exit(1);
});

function layout(page) {
    return page.evaluate(() => {
        const vis = (e) => {
            for (let x = e; x && x.nodeType === 1; x = x.parentNode)
                if (getComputedStyle(x).display === 'none') return false;
            const cs = getComputedStyle(e), b = e.getBoundingClientRect();
            return cs.visibility !== 'hidden' && +cs.opacity > 0 && b.width > 0 && b.height > 0;
        };
        const out = {viewport: window.innerWidth, scrollWidth: document.documentElement.scrollWidth,
            ok: document.body.dataset.ok, charts: +document.body.dataset.charts,
            runs: document.querySelectorAll('#t-sweep tbody tr').length,
            bars: document.querySelectorAll('.bars .br').length,
            legendRuns: document.querySelectorAll('#legend button.run').length,
            phaseRows: document.querySelectorAll('#t-phases tbody tr').length,
            nodraw: !!document.getElementById('nodraw'), overlaps: [], texts: 0, minText: 1e9};
        // Text boxes: the bars' labels and values, axis labels, legend entries.
        document.querySelectorAll('.panel').forEach((p) => {
            const boxes = [...p.querySelectorAll('.bn, .bv, .ya span, .xa span, #legend button.run, .pn, .pv')]
                .filter(vis).map((e) => ({t: e.textContent, b: e.getBoundingClientRect(), e}));
            boxes.forEach((x) => {
                out.texts++;
                const px = parseFloat(getComputedStyle(x.e).fontSize);
                if (px < out.minText) out.minText = px;
            });
            for (let i = 0; i < boxes.length; i++)
                for (let j = i + 1; j < boxes.length; j++) {
                    const a = boxes[i].b, b = boxes[j].b;
                    if (a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
                        a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
                        out.overlaps.push((p.id || '?') + ': ' + boxes[i].t + ' / ' + boxes[j].t);
                }
            // Text that leaves its panel (not inside a card that scrolls sideways: it clips).
            const pb = p.getBoundingClientRect();
            boxes.filter((x) => !x.e.closest('.tw')).forEach((x) => {
                if (x.b.left < pb.left - 0.5 || x.b.right > pb.right + 0.5)
                    out.overlaps.push((p.id || '?') + ': ' + x.t + ' leaves its panel');
            });
        });
        // The energy's error bars (issue 22): each whisker drawn (a box), inside its bar's
        // track (the plot area), over no label of its panel.
        out.whiskers = 0;
        out.whiskerBad = [];
        document.querySelectorAll('.bars .wk').forEach((w) => {
            const b = w.getBoundingClientRect(), t = w.parentElement.getBoundingClientRect();
            const name = (w.closest('.br') || {}).textContent || '?';
            out.whiskers++;
            if (!(b.width >= 1 && b.height >= 4)) out.whiskerBad.push(name + ': not drawn');
            if (b.left < t.left - 0.5 || b.right > t.right + 0.5 || b.top < t.top - 0.5 ||
                b.bottom > t.bottom + 0.5)
                out.whiskerBad.push(name + ': outside its bar');
            w.closest('.panel').querySelectorAll('.bn, .bv').forEach((l) => {
                const a = l.getBoundingClientRect();
                if (vis(l) && a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
                    a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
                    out.whiskerBad.push(name + ': over the label ' + l.textContent);
            });
        });
        out.chartHeights = [...document.querySelectorAll('svg.chart')]
            .map((s) => Math.round(s.getBoundingClientRect().height * 10) / 10);
        out.minChartHeight = out.chartHeights.length ? Math.min(...out.chartHeights) : 0;
        out.chartLines = [...document.querySelectorAll('svg.chart')].map((s) =>
            new Set([...s.querySelectorAll('polyline')].filter((q) => q.getBBox().width > 0)
                .map((q) => q.dataset.run)).size);
        out.tables = [];
        out.cueMissing = [];
        out.cueSpurious = [];
        document.querySelectorAll('table').forEach((t) => {
            const wrap = t.closest('.tw') || t.parentElement;
            const name = ((t.closest('.panel') || {}).querySelector('h3') || {}).textContent;
            const scrolls = wrap.scrollWidth > wrap.clientWidth + 1;
            const cue = wrap.previousElementSibling;
            let shown = !!cue && cue.classList.contains('cue') && vis(cue);
            if (shown) {
                const b = cue.getBoundingClientRect();
                shown = b.left >= -0.5 && b.right <= window.innerWidth + 0.5;
            }
            out.tables.push({name, scrolls, cue: shown});
            if (scrolls && !shown) out.cueMissing.push(name);
            if (!scrolls && shown) out.cueSpurious.push(name);
        });
        out.tablesScrolling = out.tables.filter((t) => t.scrolls).length;
        out.metricCharts = [...document.querySelectorAll('svg.mchart')].filter((s) =>
            [...s.querySelectorAll('polyline')].some((q) => q.getBBox().width > 0)).length;
        return out;
    });
}

// The lines of run 0 drawn (a box with a width), and of the others, in every chart.
function drawn(page) {
    return page.evaluate(() => {
        let mine = 0, others = 0;
        document.querySelectorAll('svg.chart polyline').forEach((p) => {
            const on = getComputedStyle(p).display !== 'none' && p.getBBox().width > 0;
            if (!on) return;
            if (p.dataset.run === '0') mine++;
            else others++;
        });
        return {mine, others};
    });
}

async function legend(page) {
    const b = await page.$('#legend button.run[data-run="0"]');
    if (!b) return {present: false};
    const before = await drawn(page);
    await b.click();
    const hidden = await drawn(page);
    const pressed = await page.evaluate(() =>
        document.querySelector('#legend button.run[data-run="0"]').getAttribute('aria-pressed'));
    await b.click();
    const shown = await drawn(page);
    return {present: true, before, hidden, shown, pressed,
        ok: before.mine > 0 && hidden.mine === 0 && hidden.others === before.others &&
            shown.mine === before.mine && pressed === 'false'};
}

// Clicks a header of the sweep table by its text, returns the column's values top to bottom.
async function clickSort(page, label) {
    const i = await page.evaluate((l) => {
        const ths = [...document.querySelectorAll('#t-sweep thead th')];
        const k = ths.findIndex((th) => th.textContent.replace(/[\u25b2\u25bc]/g, '').trim() === l);
        if (k >= 0) ths[k].click();
        return k;
    }, label);
    if (i < 0) return null;
    return page.evaluate((k) => [...document.querySelectorAll('#t-sweep tbody tr')].map((tr) => {
        const c = tr.children[k];
        const v = c.getAttribute('data-v');
        return v !== null && v !== '' ? +v : c.textContent.trim();
    }), i);
}

async function sort(page) {
    const ordered = (a, dir) => a.every((x, i) => i === 0 || (typeof x === 'number' &&
        typeof a[i - 1] === 'number' ? dir * (x - a[i - 1]) >= 0 : true));
    const asc = await clickSort(page, 'energy Wh');
    const desc = await clickSort(page, 'energy Wh');
    const dur = await clickSort(page, 'duration s');
    const first = await page.evaluate(() => {
        const th = document.querySelector('#t-sweep thead th[data-type="param"]');
        return th ? th.textContent : null;
    });
    const param = first ? await clickSort(page, first) : null;
    const runs = await page.evaluate(() =>
        [...document.querySelectorAll('#t-sweep tbody tr')].map((tr) => +tr.dataset.run));
    return {asc, desc, dur, param: first, paramValues: param, runs,
        ok: !!asc && ordered(asc, 1) && ordered(desc, -1) && ordered(dur, 1) &&
            (!param || ordered(param, 1))};
}

// The Pareto charts: points, their spacing after the page's nudging, the front, a tap's tip.
async function pareto(page) {
    const m = await page.evaluate(() => {
        const out = {points: 0, minGap: 1e9, nudged: 0, outside: [], front: {on: 0, width: 0}};
        document.querySelectorAll('.pa').forEach((pa) => {
            const q = pa.getBoundingClientRect();
            const c = [...pa.querySelectorAll('.pt')].map((b) => {
                const r = b.getBoundingClientRect();
                if (+b.dataset.jx || +b.dataset.jy) out.nudged++;
                if (r.left < q.left - 8 || r.right > q.right + 8 || r.top < q.top - 8 ||
                    r.bottom > q.bottom + 8)
                    out.outside.push(b.title);
                return [r.left + r.width / 2, r.top + r.height / 2];
            });
            out.points = Math.max(out.points, c.length);
            for (let i = 0; i < c.length; i++)
                for (let j = i + 1; j < c.length; j++)
                    out.minGap = Math.min(out.minGap, Math.hypot(c[i][0] - c[j][0], c[i][1] - c[j][1]));
            const f = pa.querySelector('polyline.front');
            out.front.on = Math.max(out.front.on, pa.querySelectorAll('.pt.on').length);
            if (f) out.front.width = Math.max(out.front.width, f.getBoundingClientRect().width);
        });
        out.minGap = Math.round(out.minGap * 10) / 10;
        return out;
    });
    const b = await page.$('.pa .pt');
    if (!b) return Object.assign(m, {tip: {ok: false}});
    await b.click();
    m.tip = await page.evaluate(() => {
        const pt = document.querySelector('.pa .pt'), t = pt.parentNode.querySelector('.ptip');
        const bar = document.querySelector('.bars .br[data-run="' + pt.dataset.run + '"] .bn');
        const r = t.getBoundingClientRect(), q = pt.parentNode.getBoundingClientRect();
        const text = t.hidden ? '' : t.textContent;
        return {text, ok: !t.hidden && !!bar && text.startsWith(bar.textContent.trim() + ':') &&
            r.width > 0 && r.left >= q.left - 0.5 && r.right <= q.right + 0.5};
    });
    return m;
}

// Parallel coordinates: a drag along the first axis over its top half, then a tap on it.
async function pcoords(page) {
    const ax = await page.$('.pcw .pax[data-axis="0"]');
    const lines = await page.evaluate(() => document.querySelectorAll('svg.pcs path').length);
    if (!ax) return {lines, ok: false};
    await ax.evaluate((e) => e.scrollIntoView({block: 'center', inline: 'center'}));
    const r = await ax.boundingBox();
    const x = r.x + r.width / 2;
    await page.mouse.move(x, r.y + 1);
    await page.mouse.down();
    await page.mouse.move(x, r.y + r.height * 0.3, {steps: 4});
    await page.mouse.move(x, r.y + r.height * 0.5, {steps: 4});
    await page.mouse.up();
    const dragged = await page.evaluate(() => {
        const w = document.querySelector('.pcw'), br = JSON.parse(w.dataset.brush || '{}');
        const want = [...w.querySelectorAll('svg.pcs path')].filter((p) => {
            const y = p.dataset.y.split(' ')[0];
            return br[0] && y !== '-' && +y >= br[0][0] && +y <= br[0][1];
        }).map((p) => p.dataset.run).join(' ');
        const out = [...w.querySelectorAll('svg.pcs path.out')].length;
        const rows = [...document.querySelectorAll('#t-sweep tbody tr:not(.out)')].length;
        return {brush: br[0] || null, kept: document.body.dataset.pcKept, want, out, rows};
    });
    await page.mouse.click(x, r.y + r.height * 0.8);
    const cleared = await page.evaluate(() => ({kept: (document.body.dataset.pcKept || '').split(' ').length,
        out: document.querySelectorAll('svg.pcs path.out').length}));
    const n = dragged.kept ? dragged.kept.split(' ').length : 0;
    return {lines, kept: dragged.kept, brush: dragged.brush, cleared,
        ok: !!dragged.brush && dragged.brush[0] === 0 && Math.abs(dragged.brush[1] - 50) < 2 &&
            dragged.kept === dragged.want && n >= 1 && dragged.out === lines - n &&
            dragged.rows === n && cleared.kept === lines && cleared.out === 0};
}
