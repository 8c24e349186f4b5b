import { egressFolder, socketTarget } from './forwarder'
import { proxyVariables } from './proxy-variables'

/**
 * The relay under bubblewrap when socat is installed: socat listens on the sandbox's own loopback and
 * relays each connection to the proxy's socket, as the Node forwarder does, but it starts in about a
 * millisecond where Node takes 20–30 ms (measured in bench/egress.ts). bwrap shows the host's /usr, so
 * socat's libraries are there; the binary itself is bound at a fixed path, wherever the host keeps it.
 */
export const socatTarget = `${egressFolder}/socat`

/** The sandbox shell's $0 while it starts the relay (what `ps` shows until the exec). */
const scriptName = 'toolport-egress'

// socat goes to the background from a subshell, so the sandbox's init adopts it and the command is
// not its parent (a command that waits for any child never meets it). Its port is ephemeral: in the
// sandbox's fresh network namespace its socket is the only one listening, so the first listening
// 127.0.0.1 entry of /proc/net/tcp is it, read with shell builtins alone. The command then replaces
// the shell (exec), so it keeps the shell's pid, its signals and its exit status reach bwrap unchanged.
// 256 KiB reads, as the Node forwarder's: a download is not cut into 8 KiB writes; and no Nagle delay
// on the loopback side (socat's default keeps it, which held each small TLS record back ~40 ms); and
// Node's listen backlog, where socat's default of 5 would refuse a burst of parallel connections.
const exports = Object.entries(proxyVariables('127.0.0.1:$port'))
  .map(([name, value]) => `${name}=${value}`)
  .join(' ')
const script = `relay=$(${socatTarget} -b 262144 TCP-LISTEN:0,bind=127.0.0.1,fork,nodelay,backlog=128 UNIX-CONNECT:${socketTarget} </dev/null >/dev/null 2>&1 & echo $!)
port=
while [ -z "$port" ]; do
  while read -r _ local _ state _; do
    case $local.$state in 0100007F:*.0A) port=$((0x\${local#0100007F:})); break ;; esac
  done </proc/net/tcp
  [ -n "$port" ] || kill -0 "$relay" 2>/dev/null || { echo 'toolport: the egress relay (socat) could not listen' >&2; exit 125; }
done
export ${exports}
unset relay port local state
exec "$@"`

/** The argv that runs command (an argv itself) behind socat. */
export function socatRelayArgv(command: readonly string[]): string[] {
  return ['/bin/sh', '-c', script, scriptName, ...command]
}
