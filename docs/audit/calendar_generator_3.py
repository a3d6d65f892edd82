"""Calendar generator 3 (docs/SPEC.md §4), written again from the SPEC's words alone, in plain
Python with no dependency: the layouts of the first three tickets of the fixed coordinates of
src/plan.rs (`known_answers_for_fixed_coordinates`, 2013 Année de la chance at 3 €), compared with
the ones pinned there. An auditor's check that the SPEC says enough to re-make a layout.

    python3 docs/audit/calendar_generator_3.py      # exit 0: the same bytes

The built-in definition's settings are written below (games/annee-chance.toml); the layout key
and the first prizes are the pinned ones (the prize shuffle is not re-made here).
"""
import hashlib
import pathlib
import sys
M128 = (1 << 128) - 1
MULT = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645

class Pcg:
    def __init__(self, seed16):
        self.s = int.from_bytes(seed16, 'little') | 1
    def next(self):
        self.s = (self.s * MULT) & M128
        rot = self.s >> 122
        x = ((self.s >> 64) ^ self.s) & ((1 << 64) - 1)
        return ((x >> rot) | (x << (64 - rot))) & ((1 << 64) - 1)

class Bits:
    def __init__(self, rng):
        self.rng, self.buf, self.left = rng, 0, 0
    def read(self, k):
        while self.left < k:
            self.buf |= self.rng.next() << self.left
            self.left += 64
        v = self.buf & ((1 << k) - 1)
        self.buf >>= k; self.left -= k
        return v
    def below(self, n):
        while True:
            m = self.read(32) * n
            if (m & 0xffffffff) >= (1 << 32) % n:
                return m >> 32
    def chance(self, r):
        return self.read(32) < r

def alias(entries):
    entries = [(v, w) for v, w in entries if w > 0]
    n = len(entries); k = 0
    while (1 << k) < n: k += 1
    Q = 1 << (k + 32); W = sum(w for _, w in entries)
    q = [w * Q // W for _, w in entries]
    rem = sorted(range(n), key=lambda i: (-(entries[i][1] * Q % W), i))
    for i in rem[:Q - sum(q)]: q[i] += 1
    cols = 1 << k; q += [0] * (cols - n)
    C = 1 << 32
    cut = [C] * cols; ali = list(range(cols))
    small = [i for i in range(cols) if q[i] < C]; large = [i for i in range(cols) if q[i] >= C]
    while small and large:
        s = small.pop(); l = large[-1]
        cut[s] = q[s]; ali[s] = l; q[l] -= C - q[s]
        if q[l] < C: large.pop(); small.append(l)
    def draw(bits):
        v = bits.read(k + 32); c = v % cols; u = v >> k
        i = c if u < cut[c] else ali[c]
        return entries[i][0]
    return draw

letters = "ABCDEFGH"
months = ["2","3","4","5","6","10","20","30","40","50","100","500","1000","10000","40000"]
clover_amts = ["3","4","6","10","20","30","50","100","1000"]
r = round(0.375 * 2**32)
n = len(letters)
lm = []
for a in range(n):
    for b in range(n):
        if a != b:
            w = r * n + 2 * (2**32 - r) if abs(a - b) == 1 else 2 * (2**32 - r)
            for j in range(len(months)):
                lm.append(((a, b, j), w))
losing = alias(lm)
trip = [(a,b,c) for a in range(1,14) for b in range(1,14) for c in range(1,14) if len({a,b,c})==3]
wins = [t for t in trip if 13 in t]
twelves = [t for t in trip if 12 in t and 13 not in t]
plain = [t for t in trip if max(t) <= 11]

def plan(prize, maxm=4):
    # decompositions: clover none first then clover amounts ascending; month index lists lexicographic
    dec = []
    def sums(start, target, left, cur, clover):
        if target == 0:
            if cur or clover is not None: dec.append((tuple(cur), clover))
            return
        if left == 0: return
        for i in range(start, len(months)):
            a = int(months[i])
            if a > target: break
            sums(i, target - a, left - 1, cur + [i], clover)
    for c in [None] + list(range(len(clover_amts))):
        rest = prize - (int(clover_amts[c]) if c is not None else 0)
        if rest >= 0: sums(0, rest, maxm, [], c)
    weights = [0, 24, 12, 6, 3, 2, 1, 1]
    counts = []
    for comp in range(1, maxm + 2):
        forms = []
        for cl in [False, True]:
            ways = [d for d in dec if len(d[0]) == comp - cl and (d[1] is not None) == cl]
            if ways: forms.append(ways)
        if forms: counts.append((weights[comp], forms))
    return counts

def layout(prize, seed16):
    bits = Bits(Pcg(seed16))
    win = [None] * 12; clover = None
    if prize:
        counts = plan(prize)
        total = sum(w for w, _ in counts); x = bits.below(total)
        for w, forms in counts:
            if x < w: break
            x -= w
        form = forms[bits.below(len(forms))]
        months_d, clover = form[bits.below(len(form))]
        places = list(range(12))
        for i, a in enumerate(months_d):
            j = i + bits.below(12 - i)
            places[i], places[j] = places[j], places[i]
            win[places[i]] = a
    out = []
    for m in range(12):
        if win[m] is not None:
            s = letters[bits.below(n)]; out.append(f"{s}{s}:{months[win[m]]}")
        else:
            a, b, j = losing(bits); out.append(f"{letters[a]}{letters[b]}:{months[j]}")
    if clover is not None:
        t = wins[bits.below(len(wins))]; amt = clover_amts[clover]
    else:
        lst = twelves if bits.chance(r) else plain
        t = lst[bits.below(len(lst))]; amt = clover_amts[bits.below(len(clover_amts))]
    return "/".join(out) + "|" + "-".join(map(str, t)) + ":" + amt

def ticket_seed(layout_key, index):
    # SHA-256(layout key || ticket index, 8 bytes big-endian), first 16 bytes (SPEC §4).
    return hashlib.sha256(layout_key + index.to_bytes(8, 'big')).digest()[:16]

pinned = pathlib.Path(__file__).resolve().parents[2] / "src" / "plan.rs"
lines = pinned.read_text().splitlines()
at = next(i for i, l in enumerate(lines) if l.startswith("annee-chance 3: prize key"))
key = bytes.fromhex(lines[at].split("layout key ")[1])
prizes = [int(p) for p in lines[at + 1].split()[2:5]]
want = lines[at + 2:at + 5]
got = [layout(prize, ticket_seed(key, i)) for i, prize in enumerate(prizes)]
for g, w in zip(got, want):
    print(("same " if g == w else "DIFFERS ") + g)
sys.exit(0 if got == want else 1)
