import JSZip from 'jszip'

/**
 * pptxgenjs draws a table's cell borders solid or dashed (sysDash) only. With border_style dotted the
 * tables are written dashed and their borders turned into PowerPoint's dotted preset here, in each
 * slide's XML; text-box outlines are dotted already (sysDot), so only the tables' sysDash changes.
 */
export async function dotTableBorders(pptx: Uint8Array): Promise<Uint8Array> {
  const zip = await JSZip.loadAsync(pptx)
  const slides = Object.keys(zip.files).filter((name) => /^ppt\/slides\/slide\d+\.xml$/.test(name))
  for (const name of slides) {
    const file = zip.file(name)
    if (!file) continue
    const xml = await file.async('string')
    if (xml.includes('<a:prstDash val="sysDash"/>')) {
      zip.file(name, xml.replaceAll('<a:prstDash val="sysDash"/>', '<a:prstDash val="sysDot"/>'))
    }
  }
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' })
}
