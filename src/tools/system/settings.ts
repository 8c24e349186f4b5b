import { z } from 'zod'
import { ConfigError, commaList, defineSettings, type SliceOf, variable } from '../../core/settings'

// The service's own secrets: get_env never reads them, whatever TOOLPORT_ENV_ALLOW says.
const secretVariable =
  /^(TOOLPORT_|AWS_(SECRET|SESSION|ACCESS)|.*(SECRET|TOKEN|PASSWORD|API_KEY|PRIVATE_KEY|CREDENTIAL))/i

export const environmentSettings = defineSettings({
  title: 'Environment variables for get_env',
  variables: {
    TOOLPORT_ENV_ALLOW: variable({
      schema: commaList(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/),
        'not a variable name',
        'use names like REGION',
      ),
      example: 'REGION,DEPLOY_STAGE',
      description:
        'Comma list of the variables `get_env` may read, with their values taken at start; nothing else is readable. Names that look like secrets of the service (`TOOLPORT_*`, `AWS_SECRET*`, `*_TOKEN`, `*PASSWORD*`, …) stop the service at start.',
    }),
  },
  build(values, { env }) {
    const names = values.TOOLPORT_ENV_ALLOW
    const secret = names.filter((name) => secretVariable.test(name))
    if (secret.length > 0) {
      throw new ConfigError(
        `TOOLPORT_ENV_ALLOW: ${secret.join(', ')} look like secrets of the service and are never exposed`,
      )
    }
    return { variables: Object.fromEntries(names.map((name) => [name, env[name]])) }
  },
})

export type EnvironmentSettings = SliceOf<typeof environmentSettings>
