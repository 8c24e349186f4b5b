/**
 * The environment a command with network runs with, whichever relay listens for it: both spellings of
 * each proxy variable (curl reads the lower-case ones, most others either), ALL_PROXY as SOCKS for
 * programs that speak no HTTP proxy (the proxy tells the two apart on the same port), the loopback
 * itself left direct, and Node's own fetch told to read them.
 */
export function proxyVariables(origin: string): Record<string, string> {
  const proxy = `http://${origin}`
  const socks = `socks5h://${origin}`
  const direct = 'localhost,127.0.0.1,::1'
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    ALL_PROXY: socks,
    all_proxy: socks,
    NO_PROXY: direct,
    no_proxy: direct,
    NODE_USE_ENV_PROXY: '1',
  }
}
