import { z } from 'zod'
import { commaList, defineSettings, type SliceOf, variable } from '../core/settings'

export const registrySettings = defineSettings({
  title: 'Tools',
  variables: {
    TOOLPORT_TOOLS: variable({
      schema: commaList(z.string(), 'not a tool name', 'use names from GET /v1/tools'),
      description:
        'Comma list of the built-in tools to enable; unset: all. An unknown name stops the service at start.',
    }),
  },
  build(values, { env }) {
    // Unset means every tool; set but naming none (" , ") is refused when the config checks the names.
    return { enabled: env.TOOLPORT_TOOLS ? values.TOOLPORT_TOOLS : undefined }
  },
})

export type RegistrySettings = SliceOf<typeof registrySettings>
