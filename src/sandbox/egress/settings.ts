import { z } from 'zod'
import { type EgressPolicy, egressEntry, parseEgress } from '../../core/egress-policy'
import { presetNames } from '../../core/egress-presets'
import { ConfigError, commaList, defineSettings, positiveInteger, type SliceOf, variable } from '../../core/settings'

/** Per-call limits of the egress proxy. */
export interface EgressLimits {
  /** Connections a call may open (each CONNECT, plain HTTP request or SOCKS connect is one). */
  connections: number
  /** Bytes a call may receive from all its connections together. */
  bytesIn: number
  /** Bytes a call may send. */
  bytesOut: number
  /** Longest a single connection may stay open. */
  connectionSeconds: number
}

export const egressSettings = defineSettings({
  title: 'Shell network (egress)',
  description:
    "Whether and where `execute_command` may connect. Commands never get a network of their own: their only way out is toolport's egress proxy, which resolves names itself, applies the address rules of outbound requests (no loopback, private, link-local or metadata address, whatever a name resolves to; `TOOLPORT_FETCH_ALLOW_HOSTS` is the one exception) and then this policy. A key (`egress` in the keys file) and a call (`egress` of `execute_command`) may narrow it, never widen it (docs/sandbox.md#network-egress).",
  variables: {
    TOOLPORT_SHELL_EGRESS: variable({
      schema: z.enum(['none', 'allow', 'public']),
      default: 'none',
      description:
        '`none`: no network; `allow`: only the hosts of `TOOLPORT_SHELL_EGRESS_ALLOW`; `public`: any public address.',
    }),
    TOOLPORT_SHELL_EGRESS_ALLOW: variable({
      schema: commaList(
        z.string().regex(egressEntry),
        'not a host pattern',
        'use host, *.host, host:port, [v6]:port or @preset',
      ),
      example: '@npm,@pypi,*.github.com:443,git.internal.example:443',
      description: `With \`TOOLPORT_SHELL_EGRESS=allow\`: comma list of \`host\`, \`*.host\` (any name below host), either with \`:port\`, and presets ${presetNames()
        .map((name) => `\`@${name}\``)
        .join(', ')} (docs/sandbox.md lists their hosts).`,
    }),
    TOOLPORT_SHELL_EGRESS_CONNECTIONS: variable({
      schema: positiveInteger.max(100_000),
      default: '256',
      description: 'Connections one command may open through the proxy; past it, connections are refused.',
    }),
    TOOLPORT_SHELL_EGRESS_BYTES_IN: variable({
      schema: positiveInteger,
      default: String(1024 * 1024 * 1024),
      description: 'Bytes one command may receive through the proxy, all connections together; past it, they are cut.',
    }),
    TOOLPORT_SHELL_EGRESS_BYTES_OUT: variable({
      schema: positiveInteger,
      default: String(256 * 1024 * 1024),
      description: 'Bytes one command may send through the proxy, all connections together; past it, they are cut.',
    }),
    TOOLPORT_SHELL_EGRESS_RELAY: variable({
      schema: z.enum(['auto', 'node']),
      default: 'auto',
      description:
        "What relays a command's connections from the sandbox's loopback to the proxy. `auto`: under bubblewrap, socat when it is installed (listening in about 3 ms), else the service's own Node binary running a small forwarder (20–30 ms of Node start per call with network); containers always use the Node forwarder, since their image need not have socat. `node`: always the Node forwarder.",
    }),
    TOOLPORT_SHELL_EGRESS_CONNECTION_SECONDS: variable({
      schema: positiveInteger.max(86_400),
      default: '600',
      description: 'Longest one proxied connection may stay open; then it is cut.',
    }),
  },
  build(values) {
    const listed = values.TOOLPORT_SHELL_EGRESS_ALLOW
    let policy: EgressPolicy
    if (values.TOOLPORT_SHELL_EGRESS === 'allow') {
      if (listed.length === 0) {
        throw new ConfigError(
          'TOOLPORT_SHELL_EGRESS=allow needs TOOLPORT_SHELL_EGRESS_ALLOW: the hosts commands may reach.',
        )
      }
      const parsed = parseEgress({ allow: listed })
      if ('problems' in parsed) throw new ConfigError(`TOOLPORT_SHELL_EGRESS_ALLOW: ${parsed.problems.join('; ')}`)
      policy = parsed.policy
    } else {
      if (listed.length > 0) {
        throw new ConfigError(
          `TOOLPORT_SHELL_EGRESS_ALLOW is set but TOOLPORT_SHELL_EGRESS=${values.TOOLPORT_SHELL_EGRESS}: set TOOLPORT_SHELL_EGRESS=allow to use the list.`,
        )
      }
      policy = { mode: values.TOOLPORT_SHELL_EGRESS }
    }
    const limits: EgressLimits = {
      connections: values.TOOLPORT_SHELL_EGRESS_CONNECTIONS,
      bytesIn: values.TOOLPORT_SHELL_EGRESS_BYTES_IN,
      bytesOut: values.TOOLPORT_SHELL_EGRESS_BYTES_OUT,
      connectionSeconds: values.TOOLPORT_SHELL_EGRESS_CONNECTION_SECONDS,
    }
    return { policy, limits, relay: values.TOOLPORT_SHELL_EGRESS_RELAY }
  },
})

export type EgressSettings = SliceOf<typeof egressSettings>
