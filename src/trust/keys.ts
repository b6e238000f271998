import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto'
import { lstatSync, readFileSync, statSync } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { CorruptFileError, NotFoundError } from '../errors.js'
import { LEAD_KEY_FILE, teamDir } from '../home/paths.js'
import { FILE_MODE, atomicWriteFile, ensureDir, readFileIfExists, withPath } from '../util/fs.js'
import { exportPublicKey, importPublicKey } from './swarm-scheme.js'

/**
 * The lead's keys (docs/architecture.md §2a): one Ed25519 key pair per team. The private key lives 0600
 * in the team directory, where evaluatePermission keeps every teammate tool away from it; teammates
 * get the public key at launch through the environment (never argv) or the public file.
 */

/** Environment variable through which a teammate receives the lead's public key (base64, raw 32 bytes). */
export const LEAD_VERIFY_KEY_ENV = 'SWARM_LEAD_VERIFY_KEY'
export const LEAD_PUBLIC_KEY_FILE = 'lead.pub'

export function leadKeyPath(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamDir(team, env), LEAD_KEY_FILE)
}
export function leadPublicKeyPath(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamDir(team, env), LEAD_PUBLIC_KEY_FILE)
}

/**
 * Creates the team's key pair when it has never had one; safe when several processes race (the
 * first key written wins, the others read it). Returns the public key to hand to teammates,
 * derived from the private key itself. A team whose `lead.pub` is there but whose `lead.key` is
 * gone is an error naming `swarm team rekey`: a silent new pair would make every running
 * teammate reject every lead order.
 */
export async function ensureTeamKeys(team: string, env?: NodeJS.ProcessEnv): Promise<{ publicKey: string; created: boolean }> {
  const keyFile = leadKeyPath(team, env)
  await ensureDir(path.dirname(keyFile))
  let created = false
  if ((await readFileIfExists(keyFile)) === undefined) {
    if ((await readFileIfExists(leadPublicKeyPath(team, env))) !== undefined) throw missingKey(team, keyFile)
    const { privateKey } = generateKeyPairSync('ed25519')
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string
    const tmp = path.join(path.dirname(keyFile), `.${LEAD_KEY_FILE}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
    try {
      await fs.writeFile(tmp, pem, { flag: 'wx', mode: FILE_MODE })
      // link() fails with EEXIST when another process got there first: exactly one key is kept.
      await fs.link(tmp, keyFile)
      created = true
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw withPath(err, keyFile, tmp) // a failed write(2) names no path
    } finally {
      await fs.rm(tmp, { force: true })
    }
  }
  const publicKey = exportPublicKey(createPublicKey(await loadLeadPrivateKey(team, env)))
  // Written when it does not already say so: every signed `swarm send` passes here, and then writes only its message.
  const publicFile = leadPublicKeyPath(team, env)
  if ((await readPlainFile(publicFile)) !== publicKey + '\n') await atomicWriteFile(publicFile, publicKey + '\n')
  return { publicKey, created }
}

/** `file`'s text when it is a file of its own (not a link); undefined when it is not there or cannot be read as such (it is then written anew, and that write reports what is wrong). */
async function readPlainFile(file: string): Promise<string | undefined> {
  try {
    return await readFileIfExists(file, { noFollow: true })
  } catch {
    return undefined // a link, a directory, unreadable: replaced by the write that follows
  }
}

/**
 * The last key text parsed and its key: the file is read every time (a rekey is seen at once), but
 * a leader answering sends on its socket parses the same text each time, a sixth of a send there
 * (a CPU profile of 300 sends).
 */
let lastParsed: { pem: string; key: KeyObject } | undefined

/** The team's private key. NotFoundError when the team has none; CorruptFileError when it does not parse. */
export async function loadLeadPrivateKey(team: string, env?: NodeJS.ProcessEnv): Promise<KeyObject> {
  const keyFile = leadKeyPath(team, env)
  const pem = await readFileIfExists(keyFile)
  if (pem === undefined) throw missingKey(team, keyFile)
  const stat = await fs.stat(keyFile)
  if ((stat.mode & 0o077) !== 0) await fs.chmod(keyFile, FILE_MODE) // someone loosened it: tighten again
  if (lastParsed?.pem === pem) return lastParsed.key
  try {
    const key = createPrivateKey({ key: pem, format: 'pem' })
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`expected an ed25519 key, got ${key.asymmetricKeyType}`)
    lastParsed = { pem, key }
    return key
  } catch (err) {
    throw new CorruptFileError(keyFile, `not an Ed25519 private key: ${(err as Error).message}`, { cause: err })
  }
}

function missingKey(team: string, keyFile: string): NotFoundError {
  return new NotFoundError(`team ${JSON.stringify(team)} has lost its lead signing key ${keyFile}`, {
    hint: `run \`swarm team rekey ${team}\`: it makes a new key pair and gives the running teammates the new public key`,
  })
}

/** A new key pair for the team: `lead.key` replaced atomically (0600), then `lead.pub`. */
export async function replaceTeamKeys(team: string, env?: NodeJS.ProcessEnv): Promise<{ privateKey: KeyObject; publicKey: string }> {
  const { privateKey } = generateKeyPairSync('ed25519')
  await atomicWriteFile(leadKeyPath(team, env), privateKey.export({ format: 'pem', type: 'pkcs8' }) as string)
  const publicKey = exportPublicKey(createPublicKey(privateKey))
  await atomicWriteFile(leadPublicKeyPath(team, env), publicKey + '\n')
  return { privateKey, publicKey }
}

/** The lead's private key as a function: `lead.key` read again whenever the file is replaced. */
export async function currentLeadKey(team: string, env?: NodeJS.ProcessEnv): Promise<() => KeyObject> {
  const file = leadKeyPath(team, env)
  let key = await loadLeadPrivateKey(team, env)
  let stamp = fileStamp(file)
  return () => {
    const now = fileStamp(file)
    if (now !== undefined && now !== stamp) {
      try {
        key = createPrivateKey({ key: readFileSync(file, 'utf8'), format: 'pem' })
        stamp = now
      } catch {
        // A replacement that does not parse (yet): keep the key we have; the next call looks again.
      }
    }
    return key
  }
}

function fileStamp(file: string): string | undefined {
  try {
    const s = statSync(file)
    return `${s.ino}:${s.mtimeMs}:${s.size}`
  } catch {
    return undefined // gone: keep signing with the key in memory
  }
}

/**
 * What `lead.key` and `lead.pub` are right now — inode, size, mode, mtime and ctime of each, not
 * followed — or undefined when either is not a file of its own. Any write, replacement, chmod or
 * link changes it: equal stamps mean what ensureTeamKeys last checked of them still holds.
 */
export function leadKeysStamp(team: string, env?: NodeJS.ProcessEnv): string | undefined {
  const stamps = [leadKeyPath(team, env), leadPublicKeyPath(team, env)].map((file) => {
    const s = lstatSync(file, { throwIfNoEntry: false })
    return s?.isFile() ? `${s.ino}:${s.size}:${s.mode}:${s.mtimeMs}:${s.ctimeMs}` : undefined
  })
  return stamps.includes(undefined) ? undefined : stamps.join('/')
}

/** The team's public key as written to `lead.pub` (base64 of the raw 32 bytes). */
export async function loadLeadPublicKey(team: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const file = leadPublicKeyPath(team, env)
  const text = await readFileIfExists(file)
  if (text === undefined) throw new NotFoundError(`team ${JSON.stringify(team)} has no lead public key (${file})`)
  try {
    return exportPublicKey(importPublicKey(text.trim()))
  } catch (err) {
    throw new CorruptFileError(file, `not an Ed25519 public key: ${(err as Error).message}`, { cause: err })
  }
}

/**
 * The team's public key alone, for a team mirrored on another machine (src/remote/): its members
 * verify the lead there; the private half never leaves the lead's machine. Refuses a text that is
 * not an Ed25519 public key.
 */
export async function writeLeadPublicKey(team: string, publicKey: string, env?: NodeJS.ProcessEnv): Promise<void> {
  const file = leadPublicKeyPath(team, env)
  await ensureDir(path.dirname(file))
  await atomicWriteFile(file, `${exportPublicKey(importPublicKey(publicKey.trim()))}\n`)
}

/**
 * The key a teammate verifies the lead with: `$SWARM_LEAD_VERIFY_KEY`, else the team's `lead.pub`,
 * else undefined (every lead message is then unverified).
 */
export async function resolveLeadVerifyKey(team: string, env: NodeJS.ProcessEnv = process.env): Promise<KeyObject | undefined> {
  const fromEnv = env[LEAD_VERIFY_KEY_ENV]
  if (fromEnv) return importPublicKey(fromEnv)
  try {
    return importPublicKey(await loadLeadPublicKey(team, env))
  } catch (err) {
    if (err instanceof NotFoundError) return undefined
    throw err
  }
}
