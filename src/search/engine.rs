//! The BM25F index shared by the built-in ranker and the baseline: documents
//! grouped by server, postings per term, and incremental replace/remove.
//!
//! Documents live in slots that are reused after removal, and terms in a
//! vocabulary whose entries are recycled when their document frequency drops
//! to zero, so a long-running host that keeps replacing servers does not grow
//! the index without bound.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::Field;

/// Number of indexed fields (see [`Field::ALL`]).
pub(crate) const NUM_FIELDS: usize = 7;

/// BM25F parameters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bm25Params {
    /// Term-frequency saturation.
    pub(crate) k1: f32,
    /// Per-field weight.
    pub(crate) weights: [f32; NUM_FIELDS],
    /// Per-field length normalization (0 = none, 1 = full).
    pub(crate) b: [f32; NUM_FIELDS],
}

/// A document ready for indexing: identity plus analyzed fields.
#[derive(Debug)]
pub(crate) struct Analyzed {
    pub(crate) name: String,
    pub(crate) model_name: String,
    pub(crate) fields: [Vec<String>; NUM_FIELDS],
}

#[derive(Debug)]
struct Doc {
    server: String,
    name: String,
    model_name: String,
    /// (term id, frequency per field), sorted by term id.
    terms: Vec<(u32, [u16; NUM_FIELDS])>,
    lens: [u32; NUM_FIELDS],
}

#[derive(Debug, Default)]
struct Term {
    text: String,
    postings: Vec<u32>,
}

#[derive(Debug, Default)]
struct Server {
    docs: Vec<u32>,
    /// The server name's own terms, for recognising it in queries.
    name_terms: Vec<String>,
}

/// One alternative way a query concept can match: a term or phrase and the
/// weight of that alternative.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Variant {
    pub(crate) tokens: Vec<String>,
    pub(crate) weight: f32,
    pub(crate) expanded: bool,
}

/// One query term with its alternatives; a document scores the best of them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Concept {
    pub(crate) term: String,
    pub(crate) variants: Vec<Variant>,
    /// An optional extra (a joined compound) rather than a word of the query.
    pub(crate) extra: bool,
}

/// Score of one document and, per matched concept, which variant won.
#[derive(Debug, Default)]
pub(crate) struct Scored {
    pub(crate) score: f32,
    pub(crate) matches: Vec<(usize, usize)>,
}

/// The inverted index.
#[derive(Debug)]
pub(crate) struct Engine {
    params: Bm25Params,
    docs: Vec<Option<Doc>>,
    free_docs: Vec<u32>,
    servers: BTreeMap<String, Server>,
    vocab: HashMap<String, u32>,
    terms: Vec<Term>,
    free_terms: Vec<u32>,
    len_sums: [u64; NUM_FIELDS],
    live: usize,
}

impl Engine {
    pub(crate) fn new(params: Bm25Params) -> Self {
        Engine {
            params,
            docs: Vec::new(),
            free_docs: Vec::new(),
            servers: BTreeMap::new(),
            vocab: HashMap::new(),
            terms: Vec::new(),
            free_terms: Vec::new(),
            len_sums: [0; NUM_FIELDS],
            live: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.live
    }

    /// Replaces the documents of `server`; `name_terms` are its name's terms.
    pub(crate) fn replace_server(&mut self, server: &str, name_terms: Vec<String>, docs: Vec<Analyzed>) {
        self.remove_server(server);
        if docs.is_empty() {
            return;
        }
        let mut ids = Vec::with_capacity(docs.len());
        for doc in docs {
            ids.push(self.insert(server, doc));
        }
        self.servers.insert(server.to_owned(), Server { docs: ids, name_terms });
    }

    /// Removes a server's documents. Each affected posting list is
    /// filtered once for the whole server, so removing a server costs the
    /// postings of its terms, not their length once per document (which
    /// was quadratic for a term every document shares).
    pub(crate) fn remove_server(&mut self, server: &str) -> bool {
        let Some(entry) = self.servers.remove(server) else {
            return false;
        };
        let removed: HashSet<u32> = entry.docs.iter().copied().collect();
        let mut touched: BTreeSet<u32> = BTreeSet::new();
        for &id in &entry.docs {
            let Some(doc) = self.docs[id as usize].take() else { continue };
            for (f, len) in doc.lens.iter().enumerate() {
                self.len_sums[f] -= u64::from(*len);
            }
            touched.extend(doc.terms.iter().map(|(term, _)| *term));
            self.free_docs.push(id);
            self.live -= 1;
        }
        for term in touched {
            let entry = &mut self.terms[term as usize];
            entry.postings.retain(|d| !removed.contains(d));
            if entry.postings.is_empty() {
                let text = std::mem::take(&mut entry.text);
                entry.postings = Vec::new();
                self.vocab.remove(&text);
                self.free_terms.push(term);
            }
        }
        true
    }

    fn insert(&mut self, server: &str, doc: Analyzed) -> u32 {
        let mut tf: BTreeMap<u32, [u16; NUM_FIELDS]> = BTreeMap::new();
        let mut lens = [0u32; NUM_FIELDS];
        for (f, tokens) in doc.fields.iter().enumerate() {
            lens[f] = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
            self.len_sums[f] += u64::from(lens[f]);
            for t in tokens {
                let id = self.intern(t);
                let slot = tf.entry(id).or_insert([0; NUM_FIELDS]);
                slot[f] = slot[f].saturating_add(1);
            }
        }
        let id = match self.free_docs.pop() {
            Some(id) => id,
            None => {
                self.docs.push(None);
                u32::try_from(self.docs.len() - 1).expect("fewer than 2^32 documents")
            }
        };
        for &term in tf.keys() {
            self.terms[term as usize].postings.push(id);
        }
        self.docs[id as usize] = Some(Doc {
            server: server.to_owned(),
            name: doc.name,
            model_name: doc.model_name,
            terms: tf.into_iter().collect(),
            lens,
        });
        self.live += 1;
        id
    }

    fn intern(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.vocab.get(text) {
            return id;
        }
        let id = match self.free_terms.pop() {
            Some(id) => {
                self.terms[id as usize].text = text.to_owned();
                id
            }
            None => {
                self.terms.push(Term { text: text.to_owned(), postings: Vec::new() });
                u32::try_from(self.terms.len() - 1).expect("fewer than 2^32 terms")
            }
        };
        self.vocab.insert(text.to_owned(), id);
        id
    }

    /// Whether `term` occurs in any document.
    pub(crate) fn has_term(&self, term: &str) -> bool {
        self.vocab.contains_key(term)
    }

    /// Servers whose whole name appears among `terms`.
    pub(crate) fn servers_named_by<'a>(&'a self, terms: &[&str]) -> Vec<&'a str> {
        self.servers
            .iter()
            .filter(|(_, s)| {
                !s.name_terms.is_empty() && s.name_terms.iter().all(|t| terms.contains(&t.as_str()))
            })
            .map(|(name, _)| name.as_str())
            .collect()
    }

    /// How specific a server's name is to it: for the least specific word of
    /// the name, the share of documents containing it that belong to the
    /// server. "github" scores near 1; a server called "time" scores low,
    /// because many other tools talk about time.
    pub(crate) fn server_name_specificity(&self, server: &str) -> f32 {
        let Some(entry) = self.servers.get(server) else { return 0.0 };
        let mut share = 1.0f32;
        for t in &entry.name_terms {
            let Some(&id) = self.vocab.get(t) else { continue };
            let postings = &self.terms[id as usize].postings;
            let own = postings
                .iter()
                .filter(|&&d| self.docs[d as usize].as_ref().is_some_and(|x| x.server == server))
                .count();
            // Tools of the server that never mention its name still count as its own.
            let own_total = own.max(1).min(entry.docs.len());
            let total = postings.len() - own + own_total;
            share = share.min(own_total as f32 / total as f32);
        }
        share
    }

    /// Document ids of one server.
    pub(crate) fn server_docs(&self, server: &str) -> &[u32] {
        self.servers.get(server).map_or(&[], |s| s.docs.as_slice())
    }

    fn idf(&self, df: usize) -> f32 {
        let n = self.live as f32;
        let df = df as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// BM25F contribution of one term (by id) to one document.
    fn term_score(&self, doc: &Doc, term: u32, idf: f32, avg: &[f32; NUM_FIELDS]) -> f32 {
        let Ok(pos) = doc.terms.binary_search_by_key(&term, |&(t, _)| t) else {
            return 0.0;
        };
        let tfs = doc.terms[pos].1;
        let mut tf = 0.0;
        for f in 0..NUM_FIELDS {
            if tfs[f] == 0 || self.params.weights[f] == 0.0 {
                continue;
            }
            let b = self.params.b[f];
            let norm = if avg[f] > 0.0 { 1.0 - b + b * doc.lens[f] as f32 / avg[f] } else { 1.0 };
            tf += self.params.weights[f] * f32::from(tfs[f]) / norm;
        }
        idf * tf / (self.params.k1 + tf)
    }

    fn averages(&self) -> [f32; NUM_FIELDS] {
        let mut avg = [0.0; NUM_FIELDS];
        if self.live > 0 {
            for (a, sum) in avg.iter_mut().zip(self.len_sums) {
                *a = sum as f32 / self.live as f32;
            }
        }
        avg
    }

    /// Scores every document matching at least one concept. A concept adds
    /// the best of its variants; a phrase variant scores the mean of its
    /// tokens' scores, so it only counts fully when every word is present.
    pub(crate) fn score(&self, concepts: &[Concept]) -> HashMap<u32, Scored> {
        let avg = self.averages();
        let mut total: HashMap<u32, Scored> = HashMap::new();
        for (ci, concept) in concepts.iter().enumerate() {
            let mut best: HashMap<u32, (f32, usize)> = HashMap::new();
            for (vi, variant) in concept.variants.iter().enumerate() {
                let mut partial: HashMap<u32, f32> = HashMap::new();
                let n = variant.tokens.len() as f32;
                for token in &variant.tokens {
                    let Some(&term) = self.vocab.get(token) else { continue };
                    let postings = &self.terms[term as usize].postings;
                    let idf = self.idf(postings.len());
                    for &d in postings {
                        if let Some(doc) = &self.docs[d as usize] {
                            *partial.entry(d).or_insert(0.0) += self.term_score(doc, term, idf, &avg) / n;
                        }
                    }
                }
                for (d, s) in partial {
                    let s = s * variant.weight;
                    let slot = best.entry(d).or_insert((0.0, vi));
                    if s > slot.0 || (s == slot.0 && vi < slot.1) {
                        *slot = (s, vi);
                    }
                }
            }
            for (d, (s, vi)) in best {
                if s > 0.0 {
                    let entry = total.entry(d).or_default();
                    entry.score += s;
                    entry.matches.push((ci, vi));
                }
            }
        }
        total
    }

    /// Adds `bonus` to the score of every document in `ids`, creating entries
    /// for documents that matched nothing else.
    pub(crate) fn boost(scores: &mut HashMap<u32, Scored>, ids: &[u32], bonus: f32) {
        for &d in ids {
            scores.entry(d).or_default().score += bonus;
        }
    }

    /// The `k` best documents, by score then server then name.
    pub(crate) fn top_k(&self, scores: HashMap<u32, Scored>, k: usize) -> Vec<(u32, Scored)> {
        let mut all: Vec<(u32, Scored)> = scores.into_iter().filter(|(_, s)| s.score > 0.0).collect();
        let cmp = |a: &(u32, Scored), b: &(u32, Scored)| {
            let (da, db) = (self.doc(a.0), self.doc(b.0));
            b.1.score
                .total_cmp(&a.1.score)
                .then_with(|| da.server.cmp(&db.server))
                .then_with(|| da.name.cmp(&db.name))
                .then_with(|| a.0.cmp(&b.0))
        };
        if k == 0 {
            return Vec::new();
        }
        if all.len() > k {
            all.select_nth_unstable_by(k - 1, cmp);
            all.truncate(k);
        }
        all.sort_by(cmp);
        all
    }

    fn doc(&self, id: u32) -> &Doc {
        self.docs[id as usize].as_ref().expect("scored documents are live")
    }

    /// Server, name and model name of a live document.
    pub(crate) fn identity(&self, id: u32) -> (&str, &str, &str) {
        let d = self.doc(id);
        (&d.server, &d.name, &d.model_name)
    }

    /// Fields of document `id` containing `token`.
    pub(crate) fn fields_of(&self, id: u32, token: &str) -> Vec<Field> {
        let Some(&term) = self.vocab.get(token) else { return Vec::new() };
        let doc = self.doc(id);
        match doc.terms.binary_search_by_key(&term, |&(t, _)| t) {
            Ok(pos) => {
                Field::ALL.iter().zip(doc.terms[pos].1).filter(|(_, tf)| *tf > 0).map(|(f, _)| *f).collect()
            }
            Err(_) => Vec::new(),
        }
    }

    /// Checks internal invariants; used by tests.
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut live = 0;
        let mut sums = [0u64; NUM_FIELDS];
        for (id, doc) in self.docs.iter().enumerate() {
            let Some(doc) = doc else { continue };
            live += 1;
            for (sum, len) in sums.iter_mut().zip(doc.lens) {
                *sum += u64::from(len);
            }
            for (t, _) in &doc.terms {
                assert!(self.terms[*t as usize].postings.contains(&(id as u32)));
            }
        }
        assert_eq!(live, self.live);
        assert_eq!(sums, self.len_sums);
        assert_eq!(self.servers.values().map(|s| s.docs.len()).sum::<usize>(), self.live);
        for (text, &id) in &self.vocab {
            assert_eq!(&self.terms[id as usize].text, text);
            assert!(!self.terms[id as usize].postings.is_empty());
        }
        assert_eq!(self.vocab.len() + self.free_terms.len(), self.terms.len());
    }
}
