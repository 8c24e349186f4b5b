import { describe, expect, it } from 'vitest'
import { markdownToHtml } from './html'
import { templateText } from './render-text'
import { sanitizeTemplate } from './template'

describe('markdown to HTML', () => {
  it('escapes raw HTML and drops unsafe links and remote images', () => {
    const html = markdownToHtml(
      '<script>alert(1)</script>\n\n[a](javascript:alert(1)) [b](https://ok.example) ![i](http://169.254.169.254/x.png) <img src=x onerror=alert(1)>',
    )
    expect(html).not.toMatch(/<script|<img|javascript:/i)
    expect(html).toContain('&lt;script&gt;')
    expect(html).toContain('<a href="https://ok.example">b</a>')
  })
})

describe('header and footer templates', () => {
  it('keep text and simple styling, and nothing that loads or runs', () => {
    const clean = sanitizeTemplate(
      '<div class="x" style="color:red" onclick="y"><span class="pageNumber"></span></div><img src="http://h/x"><script>x()</script><iframe src="file:///etc/passwd"></iframe><span style="background:url(http://h)">t</span><!-- <img src=x> --><a href="http://h">link</a>',
    )
    expect(clean).toBe('<div class="x" style="color:red"><span class="pageNumber"></span></div><span>t</span>link')
    expect(sanitizeTemplate('<b>1 < 2 & 3</b>')).toBe('<b>1 &lt; 2 &amp; 3</b>')
  })

  it('become text for the pdf-lib renderer', () => {
    expect(
      templateText(
        'Page <span class="pageNumber"></span> of <span class="totalPages"></span> — <b class="title"></b>',
        {
          pageNumber: '2',
          totalPages: '9',
          title: 'Report',
        },
      ),
    ).toBe('Page 2 of 9 — Report')
  })
})
