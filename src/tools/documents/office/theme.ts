import type { Customization, Layout } from './customization'

/** Customization resolved against a style preset: every value present, ready for the writers. */
export interface Theme {
  primary: string
  secondary: string
  accent: string
  text: string
  background: string
  /** Text on primary-colored fills. */
  onPrimary: string
  font: string
  bodySize: number
  headerSize: number
  footerSize: number
  boldTitle: boolean
  italicBody: boolean
  margin: { top: number; bottom: number; left: number; right: number }
  padding: { header: number; content: number; footer: number }
  lineSpacing: number
  layout: Layout
  columns: number
  headerStyle: 'solid' | 'gradient' | 'banner'
  border: { style: 'solid' | 'dashed' | 'dotted' | 'none'; width: number }
  table: { headerBg: string; headerText: string; rowBg: string; alternateRowBg: string; borderColor: string }
  shadow: boolean
}

type Preset = Pick<
  Theme,
  'primary' | 'secondary' | 'accent' | 'text' | 'background' | 'font' | 'headerStyle' | 'border' | 'shadow'
> & { alternateRowBg: string }

const presets: Record<NonNullable<Customization['style']>, Preset> = {
  corporate: {
    primary: '1F3864',
    secondary: '2E75B6',
    accent: 'C55A11',
    text: '222222',
    background: 'FFFFFF',
    font: 'Calibri',
    headerStyle: 'solid',
    border: { style: 'solid', width: 1 },
    shadow: false,
    alternateRowBg: 'EEF3FA',
  },
  modern: {
    primary: '0F172A',
    secondary: '0EA5E9',
    accent: '14B8A6',
    text: '1E293B',
    background: 'FFFFFF',
    font: 'Segoe UI',
    headerStyle: 'gradient',
    border: { style: 'solid', width: 1 },
    shadow: true,
    alternateRowBg: 'F1F5F9',
  },
  minimal: {
    primary: '333333',
    secondary: '666666',
    accent: '999999',
    text: '222222',
    background: 'FFFFFF',
    font: 'Arial',
    headerStyle: 'solid',
    border: { style: 'none', width: 1 },
    shadow: false,
    alternateRowBg: 'F7F7F7',
  },
  colorful: {
    primary: '7C3AED',
    secondary: 'EC4899',
    accent: 'F59E0B',
    text: '1F2937',
    background: 'FFFBF5',
    font: 'Verdana',
    headerStyle: 'banner',
    border: { style: 'solid', width: 2 },
    shadow: true,
    alternateRowBg: 'FDF2F8',
  },
}

/** Black or white, whichever reads better on the given fill (WCAG relative luminance). */
export function contrastText(hex: string): string {
  const channel = (offset: number) => {
    const value = Number.parseInt(hex.slice(offset, offset + 2), 16) / 255
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4
  }
  const luminance = 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4)
  return luminance > 0.45 ? '000000' : 'FFFFFF'
}

/** Mixes two hex colors: t = 0 gives `from`, t = 1 gives `to`. */
export function mixColors(from: string, to: string, t: number): string {
  const part = (offset: number) => {
    const a = Number.parseInt(from.slice(offset, offset + 2), 16)
    const b = Number.parseInt(to.slice(offset, offset + 2), 16)
    return Math.round(a + (b - a) * t)
      .toString(16)
      .padStart(2, '0')
  }
  return `${part(0)}${part(2)}${part(4)}`.toUpperCase()
}

/** Defaults that differ by medium: a slide needs larger type and smaller margins than a page. */
export interface FormatDefaults {
  margin: number
  bodySize: number
  headerSize: number
  footerSize: number
}

export const pageDefaults: FormatDefaults = { margin: 72, bodySize: 11, headerSize: 20, footerSize: 9 }

export function resolveTheme(custom: Customization = {}, defaults: FormatDefaults = pageDefaults): Theme {
  const preset = presets[custom.style ?? 'corporate']
  const primary = custom.primary_color ?? preset.primary
  const layout = custom.layout ?? 'one_column'
  const tableHeaderBg = custom.table_header_bg ?? primary
  return {
    primary,
    secondary: custom.secondary_color ?? preset.secondary,
    accent: custom.accent_color ?? preset.accent,
    text: custom.text_color ?? preset.text,
    background: custom.background_color ?? preset.background,
    onPrimary: contrastText(primary),
    font: custom.font_family ?? preset.font,
    bodySize: custom.body_font_size ?? defaults.bodySize,
    headerSize: custom.header_font_size ?? defaults.headerSize,
    footerSize: custom.footer_font_size ?? defaults.footerSize,
    boldTitle: custom.bold_title ?? true,
    italicBody: custom.italic_body ?? false,
    margin: {
      top: custom.margin_top ?? defaults.margin,
      bottom: custom.margin_bottom ?? defaults.margin,
      left: custom.margin_left ?? defaults.margin,
      right: custom.margin_right ?? defaults.margin,
    },
    padding: {
      header: custom.padding_header ?? 36,
      content: custom.padding_content ?? 8,
      footer: custom.padding_footer ?? 36,
    },
    lineSpacing: custom.line_spacing ?? 1.15,
    layout,
    columns: layout === 'three_column' ? 3 : layout === 'one_column' ? 1 : 2,
    headerStyle: custom.header_style ?? preset.headerStyle,
    border: { style: custom.border_style ?? preset.border.style, width: custom.border_width ?? preset.border.width },
    table: {
      headerBg: tableHeaderBg,
      headerText: contrastText(tableHeaderBg),
      rowBg: custom.table_row_bg ?? custom.background_color ?? preset.background,
      alternateRowBg: custom.table_alternate_row_bg ?? preset.alternateRowBg,
      borderColor: custom.table_border_color ?? 'BFBFBF',
    },
    shadow: custom.shadow_effect ?? preset.shadow,
  }
}
