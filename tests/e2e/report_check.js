// Measures a runmon report in headless Chromium over DevTools (puppeteer-core, no browser
// download): node report_check.js FILE WIDTH PNG [CHROMIUM]. Prints one JSON line: the
// document's scrollWidth, tables wider than their card, the smallest visible chart text in
// CSS px, the charts' self-check, and writes a full-page screenshot to PNG.
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
        await page.screenshot({path: png, fullPage: true});
        process.stdout.write(JSON.stringify(m) + '\n');
    } finally {
        await browser.close();
    }
})().catch((e) => {
    process.stderr.write(String(e && e.stack || e) + '\n');
    process.exit(1);
});
