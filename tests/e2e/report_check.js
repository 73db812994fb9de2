// Measures a runmon report in headless Chromium over DevTools (puppeteer-core, no browser
// download): node report_check.js FILE WIDTH PNG [CHROMIUM]. Prints one JSON line: the
// document's scrollWidth, tables wider than their card, the smallest visible chart text in
// CSS px, the charts' self-check, the SM clock chart (its lines, throttle legend, fit in its
// card, the pixels of its screenshot), and a zoom: a drag across one chart (the mouse at
// 1400 px, a finger at 390 px) must set the same range on every chart and the lane, a
// double-click must restore the page; the layout (layout()): phase-lane labels that overlap,
// the charts' heights, the scroll cue of each table, the bands' colours against the lane's,
// the legend swatches against their lines, header alignment against the cells'; writes a
// full-page screenshot to PNG.
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
        const m = await page.evaluate(() => {
            const out = {viewport: window.innerWidth,
                scrollWidth: document.documentElement.scrollWidth,
                ok: document.body.dataset.ok, charts: +document.body.dataset.charts,
                tables: 0, tablesWider: [], tablesPageOverflow: 0, minChartText: 1e9,
                chartTexts: 0};
            document.querySelectorAll('table').forEach((t) => {
                out.tables++;
                const card = t.closest('.panel').getBoundingClientRect();
                const tb = t.getBoundingClientRect();
                // The table's own width against its card's content box.
                const cs = getComputedStyle(t.closest('.panel'));
                const inner = card.width - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
                if (tb.width > inner + 0.5)
                    out.tablesWider.push((t.closest('.panel').querySelector('h3') || {}).textContent
                        + ' ' + Math.round(tb.width) + '>' + Math.round(inner));
                const wrap = t.parentElement.getBoundingClientRect();
                if (wrap.right > card.right + 0.5) out.tablesPageOverflow++;
            });
            document.querySelectorAll('svg.chart text, svg.lane text').forEach((t) => {
                if (getComputedStyle(t).visibility === 'hidden' || !t.textContent) return;
                const b = t.getBoundingClientRect();
                if (!b.width) return;
                out.chartTexts++;
                const px = parseFloat(getComputedStyle(t).fontSize) *
                    t.getScreenCTM().a;
                if (px < out.minChartText) out.minChartText = px;
            });
            return out;
        });
        m.layout = await layout(page);
        m.reading = await reading(page);
        m.clock = await clockChart(page);
        if (m.clock.present && m.clock.lines) m.clock.pixels = await clockPixels(page);
        m.zoom = await zoom(page, w < 600);
        await page.screenshot({path: png, fullPage: true});
        m.scriptErrors = errors;
        m.noScript = await withoutScript(browser, file, w);
        process.stdout.write(JSON.stringify(m) + '\n');
    } finally {
        await browser.close();
    }
})().catch((e) => {
    process.stderr.write(String(e && e.stack || e) + '\n');
    process.exit(1);
});

// What a new reader trips on (issue 36 §9), measured in the page:
//  height: the document's scrollHeight (a long phase name must not make the page grow);
//  legendSplit: legend entries that fit their card's width yet are laid out on more than one
//    line (the swatch apart from its name);
//  wordsBroken: command words in the header that fit the line yet are broken over two
//    (`--epochs` as "-" / "-epochs");
//  lane: each phase of the lane: its path, the text shown, whether it shows (a name wider
//    than its band is cut with an ellipsis, not dropped);
//  cards: each card's label, value and the line under it that says what it counts;
//  clip: for a chart whose scale is clipped (data-clipped): its label's text and whether it
//    shows, and for each of its lines the share of the plot's height its highest point
//    reaches (a line squashed by a spike reads about 0);
//  nameCells: the longest text of a table cell holding a phase name, in characters.
function reading(page) {
    return page.evaluate(() => {
        const vis = (e) => {
            for (let x = e; x && x.nodeType === 1; x = x.parentNode)
                if (getComputedStyle(x).display === 'none') return false;
            const cs = getComputedStyle(e), b = e.getBoundingClientRect();
            return cs.visibility !== 'hidden' && b.width > 0 && b.height > 0;
        };
        // The rects of an element's text (its text nodes only, not a swatch beside them).
        const textRects = (e) => {
            const rects = [];
            const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
            for (let n = walk.nextNode(); n; n = walk.nextNode()) {
                const r = document.createRange();
                r.selectNodeContents(n);
                rects.push(...[...r.getClientRects()].filter((b) => b.width > 0));
            }
            return rects;
        };
        // Line boxes of an element's text: its rects' distinct tops.
        const lines = (e) => new Set(textRects(e).map((b) => Math.round(b.top / 3))).size;
        // A legend entry is split when its text wraps, or its swatch is on another line.
        const split = (e) => {
            const rs = textRects(e), sw = e.querySelector('svg, i');
            if (lines(e) > 1) return true;
            if (!sw || !rs.length) return false;
            const b = sw.getBoundingClientRect(), mid = (b.top + b.bottom) / 2;
            return mid < rs[0].top || mid > rs[0].bottom;
        };
        const out = {height: document.documentElement.scrollHeight, legendSplit: [],
            wordsBroken: [], lane: [], cards: [], clip: [], nameCells: 0};
        document.querySelectorAll('.legend > span').forEach((e) => {
            const card = e.parentElement.getBoundingClientRect().width;
            const clone = e.cloneNode(true);
            clone.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap;' +
                'display:inline-block';
            e.parentElement.appendChild(clone);
            const natural = clone.getBoundingClientRect().width;
            clone.remove();
            if (natural <= card && split(e)) out.legendSplit.push(e.textContent);
        });
        // Each word of the command (whatever the markup around it): its text's line boxes.
        document.querySelectorAll('header .meta code').forEach((code) => {
            const line = code.closest('.meta').getBoundingClientRect().width;
            const walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
            for (let n = walk.nextNode(); n; n = walk.nextNode())
                for (const m of n.textContent.matchAll(/\S+/g)) {
                    const r = document.createRange();
                    r.setStart(n, m.index);
                    r.setEnd(n, m.index + m[0].length);
                    const rs = [...r.getClientRects()].filter((b) => b.width > 0);
                    const width = rs.reduce((a, b) => a + b.width, 0);
                    if (width < line && new Set(rs.map((b) => Math.round(b.top / 3))).size > 1)
                        out.wordsBroken.push(m[0]);
                }
        });
        document.querySelectorAll('svg.lane g.phase').forEach((g) => {
            const t = g.querySelector('text');
            out.lane.push({path: g.dataset.path, text: t ? t.textContent : '',
                shown: !!t && vis(t)});
        });
        document.querySelectorAll('.card').forEach((c) => {
            const q = (s) => (c.querySelector(s) || {}).textContent || '';
            out.cards.push({label: q('.label'), value: q('.value'), sub: q('.sub')});
        });
        document.querySelectorAll('svg.chart[data-clipped]').forEach((svg) => {
            const pt = +svg.dataset.pt, ph = +svg.dataset.ph;
            const t = svg.querySelector('g.ref.clip text');
            const reach = {};
            svg.querySelectorAll('polyline[data-series]').forEach((pl) => {
                const ys = (pl.getAttribute('points') || '').trim().split(/\s+/)
                    .map((p) => +p.split(',')[1]).filter((y) => isFinite(y));
                const top = Math.min(...ys);
                const k = pl.dataset.series;
                reach[k] = Math.max(reach[k] || 0, (pt + ph - top) / ph);
            });
            out.clip.push({id: svg.closest('.panel').id, label: t ? t.textContent : '',
                labelShown: !!t && vis(t), reach});
        });
        document.querySelectorAll('#t-phase-table tbody tr:not(.held) > td.l:first-child, ' +
            '#t-phase-memory tbody tr > td.l:first-child').forEach((td) => {
            const n = Array.from(td.textContent).length;
            if (n > out.nameCells) out.nameCells = n;
        });
        return out;
    });
}

// What a reader sees of the layout, measured in the page:
//  laneLabels/laneOverlaps: visible phase names in the lane, and pairs whose boxes overlap;
//  chartHeights: each svg.chart's drawn height in CSS px (minChartHeight the smallest);
//  tables: per table whether it scrolls sideways (scrollWidth > clientWidth of its .tw) and
//    whether a scroll cue shows: the .cue element just before its .tw, displayed, visible,
//    with a size and inside the viewport; cueMissing/cueSpurious list the tables where the
//    two disagree;
//  bands: the chart bands (#phb rect, white covers excepted) against the lane's rect of the
//    same phase (data-path, else the same place in order: both are written from one list),
//    their computed fill colours;
//  swatches: each phase swatch in a table (i.sw[data-path]) against the lane's rect of that
//    path, background against fill;
//  legend: each legend entry of a line against the line of that label: colour, dash pattern
//    and opacity of the swatch (an <i> bar: background, no dash; an svg line: its stroke);
//  headers: each column whose header is aligned otherwise than one of its cells.
function layout(page) {
    return page.evaluate(() => {
        const vis = (e) => {
            for (let x = e; x && x.nodeType === 1; x = x.parentNode) {
                const cs = getComputedStyle(x);
                if (cs.display === 'none') return false;
            }
            const cs = getComputedStyle(e), b = e.getBoundingClientRect();
            return cs.visibility !== 'hidden' && +cs.opacity > 0 && b.width > 0 && b.height > 0;
        };
        const out = {};
        const labels = [...document.querySelectorAll('svg.lane g.phase text')]
            .filter((t) => t.textContent && vis(t))
            .map((t) => ({text: t.textContent, b: t.getBoundingClientRect()}));
        out.laneLabels = labels.length;
        out.laneOverlaps = [];
        for (let i = 0; i < labels.length; i++)
            for (let j = i + 1; j < labels.length; j++) {
                const a = labels[i].b, b = labels[j].b;
                if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
                    out.laneOverlaps.push(labels[i].text + ' / ' + labels[j].text);
            }
        out.chartHeights = [...document.querySelectorAll('svg.chart')]
            .map((s) => Math.round(s.getBoundingClientRect().height * 10) / 10);
        out.minChartHeight = Math.min(...out.chartHeights);
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
            out.tables.push({name, scrolls, cue: shown,
                width: wrap.scrollWidth, shownWidth: wrap.clientWidth});
            if (scrolls && !shown) out.cueMissing.push(name);
            if (!scrolls && shown) out.cueSpurious.push(name);
        });
        out.tablesScrolling = out.tables.filter((t) => t.scrolls).length;
        const fill = (e) => getComputedStyle(e).fill;
        const bands = [...document.querySelectorAll('#phb rect:not(.under)')];
        const lanes = [...document.querySelectorAll('svg.lane g.phase')];
        out.bands = {n: bands.length, lane: lanes.length, mismatched: []};
        bands.forEach((r, i) => {
            // By path where the page names it, else by order (both written from one list).
            const g = r.dataset.path !== undefined
                ? lanes.find((x) => x.dataset.path === r.dataset.path) : lanes[i];
            const want = g ? fill(g.querySelector('rect')) : 'none';
            if (want !== fill(r))
                out.bands.mismatched.push((r.dataset.path || i) + ': band ' + fill(r) +
                    ' lane ' + want);
        });
        out.swatches = {n: 0, mismatched: []};
        document.querySelectorAll('table i.sw[data-path]').forEach((i) => {
            const g = [...document.querySelectorAll('svg.lane g.phase[data-path]')]
                .find((x) => x.dataset.path === i.dataset.path);
            if (!g) return;
            out.swatches.n++;
            const want = fill(g.querySelector('rect')), got = getComputedStyle(i).backgroundColor;
            if (want !== got) out.swatches.mismatched.push(i.dataset.path + ': ' + got + ' lane ' + want);
        });
        out.legend = {n: 0, dashed: 0, mismatched: []};
        document.querySelectorAll('section.panel').forEach((sec) => {
            const lines = [...sec.querySelectorAll('svg.chart polyline[data-label]')];
            sec.querySelectorAll('.legend span:not(.thr)').forEach((sp) => {
                const label = sp.textContent;
                const line = lines.find((p) => p.dataset.label === label);
                if (!line) return;
                out.legend.n++;
                const lc = getComputedStyle(line);
                const want = {color: lc.stroke, dash: lc.strokeDasharray, opacity: +lc.opacity};
                if (want.dash !== 'none') out.legend.dashed++;
                const sw = sp.querySelector('svg line, i');
                let got = {color: 'none', dash: 'none', opacity: 0};
                if (sw && sw.tagName.toLowerCase() === 'line') {
                    const c = getComputedStyle(sw);
                    got = {color: c.stroke, dash: c.strokeDasharray,
                        opacity: +c.opacity * +getComputedStyle(sw.ownerSVGElement).opacity};
                } else if (sw) {
                    const c = getComputedStyle(sw);
                    got = {color: c.backgroundColor, dash: 'none', opacity: +c.opacity};
                }
                if (got.color !== want.color || got.dash !== want.dash ||
                    got.opacity !== want.opacity)
                    out.legend.mismatched.push(sec.id + ' ' + label + ': swatch ' +
                        JSON.stringify(got) + ' line ' + JSON.stringify(want));
            });
        });
        out.headers = {columns: 0, mismatched: []};
        document.querySelectorAll('table').forEach((t) => {
            const name = ((t.closest('.panel') || {}).querySelector('h3') || {}).textContent;
            const ths = [...t.querySelectorAll('thead th')];
            ths.forEach((th, i) => {
                const a = getComputedStyle(th).textAlign;
                const cells = [...t.querySelectorAll('tbody tr')].map((tr) => tr.children[i])
                    .filter((td) => td);
                if (!cells.length) return;
                out.headers.columns++;
                const bad = [...new Set(cells.map((td) => getComputedStyle(td).textAlign))]
                    .filter((x) => x !== a);
                if (bad.length)
                    out.headers.mismatched.push(name + ' "' + th.textContent + '": header ' + a +
                        ', cells ' + bad.join(','));
            });
        });
        return out;
    });
}

// The SM clock chart: a line per GPU, the throttle legend, its text size and fit in its card.
async function clockChart(page) {
    return page.evaluate(() => {
        const sec = document.getElementById('c-clock');
        if (!sec) return {present: false};
        const svg = sec.querySelector('svg.chart');
        const series = new Set();
        svg.querySelectorAll('polyline[data-series]').forEach((p) => {
            if (p.getBBox().width > 0) series.add(p.dataset.series);
        });
        const card = sec.getBoundingClientRect(), b = svg.getBoundingClientRect();
        const out = {present: true, lines: series.size, series: [...series].sort(),
            throttleLegend: [...sec.querySelectorAll('.legend span.thr[data-reason]')]
                .map((e) => e.dataset.reason),
            throttleNone: !!sec.querySelector('.legend span.thr.none'),
            throttleRects: svg.querySelectorAll('rect.thr').length,
            fits: b.left >= card.left - 0.5 && b.right <= card.right + 0.5 && b.width > 0,
            minText: 1e9, texts: 0};
        svg.querySelectorAll('text').forEach((t) => {
            if (getComputedStyle(t).visibility === 'hidden' || !t.textContent) return;
            const r = t.getBoundingClientRect();
            if (!r.width) return;
            out.texts++;
            if (r.right > card.right + 0.5 || r.left < card.left - 0.5) out.fits = false;
            const px = parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
            if (px < out.minText) out.minText = px;
        });
        return out;
    });
}

// A screenshot of the clock chart, read back pixel by pixel in the page: how many pixels
// have a GPU line's colour (in all: lines) and each throttle reason's colour.
async function clockPixels(page) {
    await page.mouse.move(0, 0); // no hover cursor line in the picture
    const el = await page.$('#c-clock svg.chart');
    const b64 = await el.screenshot({encoding: 'base64'});
    return page.evaluate(async (data) => {
        const img = new Image();
        img.src = 'data:image/png;base64,' + data;
        await img.decode();
        const c = document.createElement('canvas');
        c.width = img.width;
        c.height = img.height;
        const g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        const px = g.getImageData(0, 0, c.width, c.height).data;
        const hex = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
        const near = (i, rgb) => Math.abs(px[i] - rgb[0]) + Math.abs(px[i + 1] - rgb[1]) +
            Math.abs(px[i + 2] - rgb[2]) < 40;
        const want = {};
        document.querySelectorAll('#c-clock polyline[data-series]').forEach((p) => {
            want['line ' + p.dataset.series] = hex(p.getAttribute('stroke'));
        });
        document.querySelectorAll('#c-clock .legend span.thr[data-reason] i').forEach((i) => {
            const m = i.style.background.match(/\d+/g);
            want[i.parentNode.dataset.reason] = m.slice(0, 3).map(Number);
        });
        const out = {width: c.width, height: c.height, lines: 0};
        for (const k in want) {
            let n = 0;
            for (let i = 0; i < px.length; i += 4) if (near(i, want[k])) n++;
            out[k] = n;
            if (k.startsWith('line ')) out.lines += n;
        }
        return out;
    }, b64);
}

// Every chart's and the lane's time range and axis labels, and one line's points.
function state(page) {
    return page.evaluate(() => [...document.querySelectorAll('svg.chart,svg.lane')].map((s) => ({
        id: (s.closest('section') || {}).id || 'lane',
        z0: +s.dataset.z0, z1: +s.dataset.z1, t0: +s.dataset.t0, t1: +s.dataset.t1,
        labels: [...s.querySelectorAll('g.axis.t text')].map((t) => t.textContent).join(' '),
        points: (s.querySelector('polyline[data-series]') || {getAttribute: () => ''})
            .getAttribute('points'),
        outside: [...s.querySelectorAll('polyline[data-series]')].some((p) =>
            (p.getAttribute('points') || '').trim().split(/\s+/).some((q) => {
                const x = +q.split(',')[0];
                return q && (x < 63.9 || x > 1184.1);
            })),
    })));
}

// Drags across the first chart from 25 % to 50 % of its plot (64 units from the left, data-pw
// wide), then double-clicks another.
async function zoom(page, touch) {
    const before = await state(page);
    const at = (id, f) => page.evaluate((i, fr) => {
        const svg = document.querySelector('#' + i + ' svg.chart');
        svg.scrollIntoView({block: 'center'});
        const m = svg.getScreenCTM(); // the plot's drawn width: narrower on a phone
        return {x: m.a * (64 + fr * +svg.dataset.pw) + m.e, y: m.d * 80 + m.f};
    }, id, f);
    const ids = before.filter((s) => s.id !== 'lane').map((s) => s.id);
    const a = await at(ids[0], 0.25), b = await at(ids[0], 0.5);
    if (touch) {
        await page.touchscreen.touchStart(a.x, a.y);
        for (let i = 1; i <= 10; i++) await page.touchscreen.touchMove(a.x + (b.x - a.x) * i / 10, a.y);
        await page.touchscreen.touchEnd();
    } else {
        await page.mouse.move(a.x, a.y);
        await page.mouse.down();
        await page.mouse.move(b.x, b.y, {steps: 10});
        await page.mouse.up();
    }
    const zoomed = await state(page);
    // The zoomed clock chart's screenshot, read back as before.
    const pixels = (await page.$('#c-clock svg.chart')) ? await clockPixels(page) : null;
    const t0 = before[0].t0, t1 = before[0].t1;
    const last = ids[ids.length - 1], c = await at(last, 0.7);
    await page.mouse.click(c.x, c.y, {count: 2});
    const reset = await state(page);
    const same = (x, y) => x.length === y.length && x.every((s, i) => s.labels === y[i].labels &&
        s.points === y[i].points && s.z0 === y[i].z0 && s.z1 === y[i].z1);
    return {
        charts: zoomed.length,
        want: [Math.round(t0 + 0.25 * (t1 - t0)), Math.round(t0 + 0.5 * (t1 - t0))],
        ranges: [...new Set(zoomed.map((s) => s.z0 + '-' + s.z1))],
        // A range within 1 % of the span dragged over, the same on every chart.
        rangeOk: zoomed.every((s) => Math.abs(s.z0 - (t0 + 0.25 * (t1 - t0))) < 0.01 * (t1 - t0) &&
            Math.abs(s.z1 - (t0 + 0.5 * (t1 - t0))) < 0.01 * (t1 - t0) &&
            s.z0 === zoomed[0].z0 && s.z1 === zoomed[0].z1),
        labelsBefore: before[0].labels, labelsZoomed: zoomed[0].labels,
        labelsSame: zoomed.every((s) => s.labels === zoomed[0].labels),
        labelsChanged: zoomed.every((s, i) => s.labels !== before[i].labels && s.labels !== ''),
        linesInPlot: zoomed.every((s) => !s.outside),
        restored: same(before, reset) && reset.every((s) => s.z0 === s.t0 && s.z1 === s.t1),
        clockPixels: pixels,
    };
}

// The page with JavaScript off: the static SVG still draws (charts with a line, the clock
// chart among them) and no zoom control appears.
async function withoutScript(browser, file, w) {
    const page = await browser.newPage();
    await page.setJavaScriptEnabled(false);
    await page.setViewport({width: w, height: 1000});
    await page.goto('file://' + file, {waitUntil: 'load'});
    const out = await page.evaluate(() => ({
        ran: 'ok' in document.body.dataset,
        charts: [...document.querySelectorAll('svg.chart')].length,
        drawn: [...document.querySelectorAll('svg.chart')].filter((s) =>
            [...s.querySelectorAll('polyline')].some((p) => p.getBBox().width > 0)).length,
        clock: !!document.querySelector('#c-clock polyline'),
        reset: !!document.querySelector('.zreset'),
    }));
    await page.close();
    return out;
}
