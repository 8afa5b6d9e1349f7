// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: authenticated membership.
 *
 * Every member of a job holds the job's secret.  Each connection proves,
 * in both directions, that the other end holds it too, without the secret
 * ever crossing the wire:
 *
 *   initiator -> responder   REQ: rank, group tag, nonce Ni
 *   responder -> initiator   REP: rank, nonce Nr, HMAC(K, "rmawin-R" | T)
 *   initiator -> responder   first control message AUTH: HMAC(K, "rmawin-I" | T)
 *
 * where T is the transcript (struct rmawin_wire_transcript): the group id
 * (SHA-256 of the group's shape), both ranks, both queue pair numbers and
 * both nonces.  Fresh nonces on both sides make a recorded handshake
 * worthless; the queue pair numbers tie the proof to one connection, so a
 * man in the middle cannot relay it onto another; the two labels keep one
 * direction's proof from serving as the other's.
 *
 * The initiator checks the responder's proof before its queue pair leaves
 * INIT; the responder's queue pair grants no remote access until the
 * initiator's AUTH checks out.  See Documentation/security.rst.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <crypto/sha2.h>

#include "rmawin.h"

/**
 * rmawin_auth_init() - key the group's MAC with the job's secret
 * @grp: the group
 * @ukey: the key, in user memory
 * @len: its length, RMAWIN_JOB_KEY_MIN..RMAWIN_JOB_KEY_MAX (checked)
 *
 * The key lives on only inside the keyed hash; our copy is wiped.
 *
 * Context: process context.
 * Return: 0, -EFAULT, -ENOMEM, or the crypto API's error.
 */
int rmawin_auth_init(struct rmawin_group *grp, const void __user *ukey, u32 len)
{
	u8 key[RMAWIN_JOB_KEY_MAX];
	struct crypto_shash *tfm;
	int ret;

	if (copy_from_user(key, ukey, len)) {
		ret = -EFAULT;
		goto out_wipe;
	}
	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm)) {
		ret = PTR_ERR(tfm);
		goto out_wipe;
	}
	ret = crypto_shash_setkey(tfm, key, len);
	if (ret)
		crypto_free_shash(tfm);
	else
		grp->mac_tfm = tfm;
out_wipe:
	memzero_explicit(key, sizeof(key));
	return ret;
}

/**
 * rmawin_auth_free() - drop the keyed hash (crypto_free_shash wipes it)
 * @grp: the group
 */
void rmawin_auth_free(struct rmawin_group *grp)
{
	if (grp->mac_tfm)
		crypto_free_shash(grp->mac_tfm);
	grp->mac_tfm = NULL;
}

/**
 * rmawin_group_id() - the group id: SHA-256 of the group's shape
 * @grp: the group, with its addresses
 *
 * Every member computes the same id from the same rank count and address
 * list; it is not secret.
 */
void rmawin_group_id(struct rmawin_group *grp)
{
	struct rmawin_wire_group_addr a;
	struct sha256_state st;
	__be32 n = cpu_to_be32(grp->nranks);
	u32 i;

	sha256_init(&st);
	sha256_update(&st, (const u8 *)RMAWIN_GROUP_ID_PREFIX, sizeof(RMAWIN_GROUP_ID_PREFIX) - 1);
	sha256_update(&st, (const u8 *)&n, sizeof(n));
	for (i = 0; i < grp->nranks; i++) {
		const struct sockaddr_storage *ss = &grp->addrs[i];

		memset(&a, 0, sizeof(a));
		a.family = cpu_to_be16(ss->ss_family);
		if (ss->ss_family == AF_INET) {
			const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

			a.port = sin->sin_port;
			memcpy(a.addr, &sin->sin_addr, 4);
		} else {
			const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

			a.port = sin6->sin6_port;
			a.scope_id = cpu_to_be32(sin6->sin6_scope_id);
			memcpy(a.addr, &sin6->sin6_addr, 16);
		}
		sha256_update(&st, (const u8 *)&a, sizeof(a));
	}
	sha256_final(&st, grp->group_id);
}

/**
 * rmawin_auth_nonce() - a fresh nonce
 * @nonce: RMAWIN_NONCE_LEN bytes
 */
void rmawin_auth_nonce(u8 *nonce)
{
	get_random_bytes(nonce, RMAWIN_NONCE_LEN);
}

/**
 * rmawin_auth_mac() - one direction's proof for a connection
 * @peer: the peer the connection is with
 * @label: RMAWIN_LABEL_INIT or RMAWIN_LABEL_RESP
 * @mac: out: RMAWIN_MAC_LEN bytes
 *
 * Uses @peer's handshake state: the nonces and queue pair numbers.  The
 * initiator is always the higher rank.
 *
 * Return: 0 or the crypto API's error.
 */
int rmawin_auth_mac(struct rmawin_peer *peer, const char *label, u8 *mac)
{
	struct rmawin_group *grp = peer->grp;
	bool we_init = grp->rank > peer->rank;
	struct rmawin_wire_transcript t;
	int ret;

	SHASH_DESC_ON_STACK(desc, grp->mac_tfm);

	memset(&t, 0, sizeof(t));
	memcpy(t.label, label, RMAWIN_LABEL_LEN);
	memcpy(t.group, grp->group_id, RMAWIN_GROUP_ID_LEN);
	t.nranks = cpu_to_be32(grp->nranks);
	t.init_rank = cpu_to_be32(we_init ? grp->rank : peer->rank);
	t.resp_rank = cpu_to_be32(we_init ? peer->rank : grp->rank);
	t.init_qpn = cpu_to_be32(we_init ? peer->qp->qp_num : peer->remote_qpn);
	t.resp_qpn = cpu_to_be32(we_init ? peer->remote_qpn : peer->qp->qp_num);
	memcpy(t.init_nonce, we_init ? peer->nonce : peer->remote_nonce, RMAWIN_NONCE_LEN);
	memcpy(t.resp_nonce, we_init ? peer->remote_nonce : peer->nonce, RMAWIN_NONCE_LEN);

	desc->tfm = grp->mac_tfm;
	ret = crypto_shash_digest(desc, (const u8 *)&t, sizeof(t), mac);
	shash_desc_zero(desc);
	return ret;
}

/**
 * rmawin_auth_check() - does a proof the peer sent match ours?
 * @peer: the peer
 * @label: the label the peer's side uses
 * @mac: what it sent, RMAWIN_MAC_LEN bytes
 *
 * Return: true if it does, in constant time.
 */
bool rmawin_auth_check(struct rmawin_peer *peer, const char *label, const u8 *mac)
{
	u8 want[RMAWIN_MAC_LEN];
	bool ok;

	ok = !rmawin_auth_mac(peer, label, want) && !crypto_memneq(want, mac, RMAWIN_MAC_LEN);
	memzero_explicit(want, sizeof(want));
	return ok;
}
