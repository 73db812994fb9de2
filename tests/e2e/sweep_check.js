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
//  ok/charts: the page's self-check; scriptErrors.
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
            const boxes = [...p.querySelectorAll('.bn, .bv, .ya span, .xa span, #legend button.run')]
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
            // Text that leaves its panel.
            const pb = p.getBoundingClientRect();
            boxes.forEach((x) => {
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
