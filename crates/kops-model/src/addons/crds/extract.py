# Writes the CustomResourceDefinitions of a kOps addon template as JSON, schemas with
# their descriptions (prose) left out: python3 extract.py TEMPLATE OUT.json
import sys, yaml, json, re
src, out = sys.argv[1], sys.argv[2]
text = open(src).read()
# Drop template directives (CRDs of these templates have none inside).
docs = []
for part in re.split(r'(?m)^---\s*$', text):
    if 'kind: CustomResourceDefinition' not in part: continue
    if '{{' in part: 
        part = re.sub(r'\{\{[^}]*\}\}', '', part)
    d = yaml.safe_load(part)
    if d and d.get('kind') == 'CustomResourceDefinition': docs.append(d)
def strip(schema):
    if isinstance(schema, dict):
        o = {}
        for k, v in schema.items():
            if k == 'description' and isinstance(v, str): continue
            if k in ('properties', 'patternProperties', 'definitions') and isinstance(v, dict):
                o[k] = {pk: strip(pv) for pk, pv in v.items()}
            else:
                o[k] = strip(v)
        return o
    if isinstance(schema, list): return [strip(x) for x in schema]
    return schema
for d in docs:
    for ver in d['spec'].get('versions', []):
        if 'schema' in ver: ver['schema'] = strip(ver['schema'])
        for col in ver.get('additionalPrinterColumns', []) or []:
            col.pop('description', None)
    if d.get('metadata', {}).get('creationTimestamp', 0) is None: del d['metadata']['creationTimestamp']
json.dump(docs, open(out, 'w'), indent=None, separators=(',', ':'), sort_keys=True)
print(len(docs), 'CRDs', [d['metadata']['name'] for d in docs])
