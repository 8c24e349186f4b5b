import { z } from 'zod'

/**
 * The customization table of the reference tool, with snake_case keys. Strict: an unknown key is a
 * 400 naming it, so a model learns at once that an option does nothing rather than silently losing it.
 */
export const HexColor = z
  .string()
  .regex(/^#?[0-9A-Fa-f]{6}$/, 'must be a hex color such as "1A73E8" or "#1A73E8"')
  .transform((value) => value.replace('#', '').toUpperCase())

const Points = (max: number) => z.number().min(0).max(max)

const layouts = ['one_column', 'two_column', 'three_column', 'grid'] as const
// The reference spells layouts in camelCase; both spellings are accepted.
const layoutAliases: Record<string, (typeof layouts)[number]> = {
  oneColumn: 'one_column',
  twoColumn: 'two_column',
  threeColumn: 'three_column',
}

export const Customization = z
  .strictObject({
    primary_color: HexColor.optional().describe('Titles, heading bars. Hex, e.g. "1A73E8".'),
    secondary_color: HexColor.optional().describe('Subheadings and secondary accents.'),
    accent_color: HexColor.optional().describe('Rules, bullets, links, highlights.'),
    text_color: HexColor.optional().describe('Body text.'),
    background_color: HexColor.optional().describe('Page, slide or cell background.'),
    font_family: z
      .string()
      .regex(/^[A-Za-z0-9 _-]{1,64}$/, 'must be a font name such as "Calibri"')
      .optional(),
    body_font_size: z.number().min(6).max(72).optional().describe('Points.'),
    header_font_size: z.number().min(8).max(96).optional().describe('Heading size in points.'),
    footer_font_size: z.number().min(5).max(48).optional().describe('Points.'),
    bold_title: z.boolean().optional(),
    italic_body: z.boolean().optional(),
    margin_top: Points(216).optional().describe('Points (72 = 1 inch).'),
    margin_bottom: Points(216).optional().describe('Points.'),
    margin_left: Points(216).optional().describe('Points.'),
    margin_right: Points(216).optional().describe('Points.'),
    padding_header: Points(144).optional().describe('Space around the header, points.'),
    padding_content: Points(144).optional().describe('Space between content blocks, points.'),
    padding_footer: Points(144).optional().describe('Space around the footer, points.'),
    line_spacing: z.number().min(0.5).max(4).optional().describe('Line height as a multiple, e.g. 1.15.'),
    layout: z
      .enum([...layouts, 'oneColumn', 'twoColumn', 'threeColumn'])
      .transform((value) => layoutAliases[value] ?? (value as (typeof layouts)[number]))
      .optional()
      .describe('one_column | two_column | three_column | grid.'),
    style: z.enum(['corporate', 'modern', 'minimal', 'colorful']).optional().describe('Preset palette and fonts.'),
    header_style: z.enum(['solid', 'gradient', 'banner']).optional(),
    border_style: z.enum(['solid', 'dashed', 'dotted', 'none']).optional(),
    border_width: z.number().int().min(1).max(5).optional().describe('Points, 1-5.'),
    table_header_bg: HexColor.optional(),
    table_row_bg: HexColor.optional(),
    table_alternate_row_bg: HexColor.optional(),
    table_border_color: HexColor.optional(),
    shadow_effect: z.boolean().optional().describe('Drop shadows on title blocks, boxes and tables.'),
  })
  .describe('Styling; every option is optional and unknown options are refused.')

export type Customization = z.output<typeof Customization>
export type Layout = (typeof layouts)[number]
