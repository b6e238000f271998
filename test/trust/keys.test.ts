import { generateKeyPairSync } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CorruptFileError, NotFoundError } from '../../src/errors.js'
import {
  LEAD_VERIFY_KEY_ENV,
  ensureTeamKeys,
  leadKeyPath,
  leadPublicKeyPath,
  loadLeadPrivateKey,
  loadLeadPublicKey,
  replaceTeamKeys,
  resolveLeadVerifyKey,
} from '../../src/trust/keys.js'
import { teamLeadSigner } from '../../src/trust/sign.js'
import { exportPublicKey, importPublicKey, verifyLeadMessage } from '../../src/trust/swarm-scheme.js'
import { useTempDir } from '../support/home.js'

let env: NodeJS.ProcessEnv
useTempDir('swarm-perm-sign-', (d) => (env = { SWARM_HOME: d }))

describe('team keys', () => {
  it('creates a key pair once: private 0600 in a 0700 dir, public exported', async () => {
    const first = await ensureTeamKeys('alpha', env)
    expect(first.created).toBe(true)
    const second = await ensureTeamKeys('alpha', env)
    expect(second).toEqual({ publicKey: first.publicKey, created: false })
    const keyFile = leadKeyPath('alpha', env)
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600)
    expect(fs.statSync(path.dirname(keyFile)).mode & 0o777).toBe(0o700)
    expect(fs.statSync(leadPublicKeyPath('alpha', env)).mode & 0o077).toBe(0)
    expect(Buffer.from(first.publicKey, 'base64')).toHaveLength(32)
    expect(await loadLeadPublicKey('alpha', env)).toBe(first.publicKey)
    expect(exportPublicKey(importPublicKey(await loadLeadPrivateKey('alpha', env)))).toBe(first.publicKey)
    expect(fs.readdirSync(path.dirname(keyFile)).filter((n) => n.endsWith('.tmp'))).toEqual([])
  })

  it('keeps exactly one key when several processes race to create it', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => ensureTeamKeys('race', env)))
    expect(new Set(results.map((r) => r.publicKey)).size).toBe(1)
    expect(results.filter((r) => r.created)).toHaveLength(1)
  })

  it('tightens a key file someone made readable to others', async () => {
    await ensureTeamKeys('alpha', env)
    fs.chmodSync(leadKeyPath('alpha', env), 0o644)
    await loadLeadPrivateKey('alpha', env)
    expect(fs.statSync(leadKeyPath('alpha', env)).mode & 0o777).toBe(0o600)
  })

  it('reports a missing or corrupt key clearly', async () => {
    await expect(loadLeadPrivateKey('nokey', env)).rejects.toThrow(NotFoundError)
    await ensureTeamKeys('bad', env)
    fs.writeFileSync(leadKeyPath('bad', env), 'garbage')
    await expect(loadLeadPrivateKey('bad', env)).rejects.toThrow(CorruptFileError)
    await expect(ensureTeamKeys('bad', env)).rejects.toThrow(CorruptFileError)
    expect(fs.readFileSync(leadKeyPath('bad', env), 'utf8')).toBe('garbage')
  })

  it('leaves lead.pub as it is when it holds the key (a signed send writes nothing else), and repairs it when it does not', async () => {
    const { publicKey } = await ensureTeamKeys('alpha', env)
    const file = leadPublicKeyPath('alpha', env)
    const before = fs.statSync(file)
    await ensureTeamKeys('alpha', env)
    const after = fs.statSync(file)
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs])
    // Replaced by someone else's key: written anew.
    fs.writeFileSync(file, exportPublicKey(generateKeyPairSync('ed25519').publicKey) + '\n')
    await ensureTeamKeys('alpha', env)
    expect(fs.readFileSync(file, 'utf8')).toBe(publicKey + '\n')
    expect(fs.statSync(file).mode & 0o077).toBe(0)
    // A link, even to a file that holds the right key, is not taken for it: refused as every file swarm keeps (exit 5).
    const elsewhere = path.join(path.dirname(file), 'elsewhere.pub')
    fs.writeFileSync(elsewhere, publicKey + '\n')
    fs.rmSync(file)
    fs.symlinkSync(elsewhere, file)
    await expect(ensureTeamKeys('alpha', env)).rejects.toThrow(CorruptFileError)
  })

  it('gives a teammate the key from the environment, else from lead.pub', async () => {
    const { publicKey } = await ensureTeamKeys('alpha', env)
    const fromFile = await resolveLeadVerifyKey('alpha', env)
    expect(fromFile && exportPublicKey(fromFile)).toBe(publicKey)
    const other = exportPublicKey(generateKeyPairSync('ed25519').publicKey)
    const fromEnv = await resolveLeadVerifyKey('alpha', { ...env, [LEAD_VERIFY_KEY_ENV]: other })
    expect(fromEnv && exportPublicKey(fromEnv)).toBe(other)
    expect(await resolveLeadVerifyKey('nokeys', env)).toBeUndefined()
  })

  it('reuses the lead signer while lead.key and lead.pub are unchanged, and checks them again once either changed', async () => {
    const { publicKey } = await ensureTeamKeys('alpha', env)
    const entry = { from: 'team-lead', text: 'hi', timestamp: '2026-01-01T00:00:00.000Z', msg_id: 'm1' }
    const first = await teamLeadSigner('alpha', env)
    expect(await teamLeadSigner('alpha', env)).toBe(first)
    // lead.pub replaced by someone else's key: repaired, as ensureTeamKeys does.
    const pub = leadPublicKeyPath('alpha', env)
    fs.writeFileSync(pub, exportPublicKey(generateKeyPairSync('ed25519').publicKey) + '\n')
    await teamLeadSigner('alpha', env)
    expect(fs.readFileSync(pub, 'utf8')).toBe(publicKey + '\n')
    // lead.key loosened: tightened again.
    fs.chmodSync(leadKeyPath('alpha', env), 0o644)
    await teamLeadSigner('alpha', env)
    expect(fs.statSync(leadKeyPath('alpha', env)).mode & 0o777).toBe(0o600)
    // A new key pair: the signer signs with it.
    const rekeyed = await replaceTeamKeys('alpha', env)
    const sigs = (await teamLeadSigner('alpha', env))(entry, 'w1')
    expect(verifyLeadMessage(rekeyed.publicKey, { ...entry, leadSig: sigs?.leadSig }, 'w1')).toBe(true)
    expect(verifyLeadMessage(publicKey, { ...entry, leadSig: sigs?.leadSig }, 'w1')).toBe(false)
    // lead.key lost (lead.pub still there): the error naming swarm team rekey, not the signer kept.
    fs.rmSync(leadKeyPath('alpha', env))
    await expect(teamLeadSigner('alpha', env)).rejects.toThrow(NotFoundError)
  })
})
